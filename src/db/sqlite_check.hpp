#pragma once
// One checking macro for SQLite calls (STYLE.md 4). FT_SQLITE_CALL(db, expr) throws
// SqliteError naming file:line, the call's text, the result code's name (sqlite3_errstr)
// and the connection's own message (sqlite3_errmsg: which constraint, which table...).
// FT_SQLITE_CALL_NOEXCEPT is its twin for destructors: it reports on stderr, never throws.
//
//   FT_SQLITE_CALL(db, sqlite3_bind_int64(stmt, 1, value));
//
// SQLITE_OK, SQLITE_ROW and SQLITE_DONE count as success.
#include <sqlite3.h>

#include <string>

#include "common/error.hpp"
#include "common/source_file.hpp"

namespace fusetune::db {

// A damaged or foreign file (SQLITE_CORRUPT, SQLITE_NOTADB) is bad input, exit code 2;
// anything else (busy past the timeout, disk full, I/O, a constraint) is a failure, exit 1.
class SqliteError : public Error {
 public:
  SqliteError(int result, const std::string& what);
  [[nodiscard]] int result() const noexcept { return result_; }

 private:
  int result_;
};

[[nodiscard]] constexpr bool sqlite_ok(int result) noexcept {
  return result == SQLITE_OK || result == SQLITE_ROW || result == SQLITE_DONE;
}

namespace detail {
// db may be null (e.g. before a connection exists): the message then has no errmsg part.
[[noreturn]] void throw_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line);
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
