#pragma once
// One checking macro for SQLite calls (STYLE.md 4). FT_SQLITE_CALL(db, expr) throws
// SqliteError naming file:line, the call's text, the result code's name (sqlite3_errstr)
// and the connection's own message (sqlite3_errmsg: which constraint, which table...).
// FT_SQLITE_CALL_NOEXCEPT is its twin for destructors: it reports on stderr, never throws.
//
// Faults of the file itself rather than of fusetune's SQL (read-only, cannot open, disk full,
// I/O, busy, damaged: see is_file_fault) on a connection to a named file are the user's to
// fix, so their message names the file and says what failed, without the call or location:
//   cannot write the tuning database /home/me/t.db: attempt to write a readonly database
//
//   FT_SQLITE_CALL(db, sqlite3_bind_int64(stmt, 1, value));
//
// SQLITE_OK, SQLITE_ROW and SQLITE_DONE count as success.
#include <sqlite3.h>

#include <string>

#include "common/error.hpp"
#include "common/source_file.hpp"

namespace fusetune::db {

// A damaged or foreign file (SQLITE_CORRUPT, SQLITE_NOTADB) or one this user may not open or
// write (SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_AUTH) is bad input, exit code 2;
// anything else (busy past the timeout, disk full, I/O, a constraint) is a failure, exit 1.
class SqliteError : public Error {
 public:
  // reason: SQLite's words alone (below); empty: the same as what.
  SqliteError(int result, const std::string& what, std::string reason = {});
  [[nodiscard]] int result() const noexcept { return result_; }
  [[nodiscard]] int primary() const noexcept { return result_ & 0xff; }  // extended codes keep it in the low byte
  // SQLite's words for the fault without call or location: the connection's message
  // ("NOT NULL constraint failed: winners.ptx", "attempt to write a readonly database"), and for
  // a file that cannot be opened or read the system's ("... database file: Permission denied").
  // For a caller that words its own message around it.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  int result_;
  std::string reason_;
};

// Whether a result code is a fault of the file or its surroundings (permissions, space, I/O,
// another process's lock, damage) rather than of the statement that met it.
[[nodiscard]] bool is_file_fault(int result) noexcept;

[[nodiscard]] constexpr bool sqlite_ok(int result) noexcept {
  return result == SQLITE_OK || result == SQLITE_ROW || result == SQLITE_DONE;
}

namespace detail {
// db may be null (e.g. before a connection exists): the message then has no errmsg part.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line);
// The same for sqlite3_open_v2 of `path`, whose failed handle does not know its file name yet.
[[noreturn]] void throw_open_error(sqlite3* db, int result, const std::string& path, const char* file, int line);
void report_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace fusetune::db


#define FT_SQLITE_CALL(handle, expr)                                                               \
  do {                                                                                           \
    const int ft_sqlite_result_ = (expr);                                                        \
    if (!::fusetune::db::sqlite_ok(ft_sqlite_result_)) {                                         \
      ::fusetune::db::detail::throw_sqlite_error((handle), ft_sqlite_result_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                            \
  } while (0)

#define FT_SQLITE_CALL_NOEXCEPT(handle, expr)                                                       \
  do {                                                                                            \
    const int ft_sqlite_result_ = (expr);                                                         \
    if (!::fusetune::db::sqlite_ok(ft_sqlite_result_)) {                                          \
      ::fusetune::db::detail::report_sqlite_error((handle), ft_sqlite_result_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                             \
  } while (0)
