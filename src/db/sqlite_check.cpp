#include "db/sqlite_check.hpp"

#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace fusetune::db {

namespace {

ExitCode exit_code_for(int result) noexcept {
  switch (result & 0xff) {  // extended codes carry the primary one in the low byte
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return ExitCode::bad_input;
    default:
      return ExitCode::failure;
  }
}

// "SQLITE_BUSY-ish text (the connection's message)"; the message repeats the code's text
// for many errors, so it is left out then.
std::string describe(sqlite3* db, int result) {
  std::string text = sqlite3_errstr(result);
  if (db != nullptr && sqlite3_errcode(db) == result) {
    const char* msg = sqlite3_errmsg(db);
    if (msg != nullptr && text != msg) text += fmt::format(" ({})", msg);
  }
  return text;
}

// The connection's own message when it is about this result (it names the constraint, the
// table...), else the code's text; for a file that could not be opened or read, the system's
// words too (EACCES, ENOENT, EISDIR...).
std::string reason_for(sqlite3* db, int result) {
  std::string text = sqlite3_errstr(result);
  if (db != nullptr && sqlite3_errcode(db) == result) {
    const char* msg = sqlite3_errmsg(db);
    if (msg != nullptr && *msg != '\0') text = msg;
  }
  const int primary = result & 0xff;
  if (db != nullptr && (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR)) {
    if (const int err = sqlite3_system_errno(db); err != 0) text += fmt::format(": {}", std::strerror(err));
  }
  return text;
}

const char* verb_for(int result) noexcept {
  switch (result & 0xff) {
    case SQLITE_READONLY:
    case SQLITE_FULL:
      return "cannot write";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "cannot read";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "cannot lock";
    case SQLITE_IOERR:
      switch (result) {
        case SQLITE_IOERR_READ:
        case SQLITE_IOERR_SHORT_READ:
          return "cannot read";
        case SQLITE_IOERR_WRITE:
        case SQLITE_IOERR_FSYNC:
        case SQLITE_IOERR_DIR_FSYNC:
        case SQLITE_IOERR_TRUNCATE:
          return "cannot write";
        default:
          return "cannot use";
      }
    default:
      return "cannot open";
  }
}

// The file a connection's fault is about; empty for an in-memory or temporary database, whose
// faults are fusetune's own.
std::string file_of(sqlite3* db) {
  if (db == nullptr) return {};
  const char* name = sqlite3_db_filename(db, "main");
  return name != nullptr ? std::string(name) : std::string();
}

}  // namespace

SqliteError::SqliteError(int result, const std::string& what, std::string reason)
    : Error(exit_code_for(result), what), result_(result), reason_(reason.empty() ? this->what() : std::move(reason)) {}

bool is_file_fault(int result) noexcept {
  switch (result & 0xff) {
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_NOLFS:
    case SQLITE_PROTOCOL:
      return true;
    default:
      return false;
  }
}

namespace detail {

void throw_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line) {
  // The message is formatted before the reason moves into the error (argument order is unspecified).
  std::string reason = reason_for(db, result);
  if (const std::string path = file_of(db); is_file_fault(result) && !path.empty()) {
    std::string what = fmt::format("{} the tuning database {}: {}", verb_for(result), path, reason);
    throw SqliteError(result, what, std::move(reason));
  }
  std::string what = fmt::format("{}:{}: {} failed: {}", file, line, call, describe(db, result));
  throw SqliteError(result, what, std::move(reason));
}

void throw_open_error(sqlite3* db, int result, const std::string& path, const char* file, int line) {
  std::string reason = reason_for(db, result);
  if (is_file_fault(result) && !path.empty() && path != ":memory:") {
    std::string what = fmt::format("{} the tuning database {}: {}", verb_for(result), path, reason);
    throw SqliteError(result, what, std::move(reason));
  }
  std::string what = fmt::format("{}:{}: sqlite3_open_v2(\"{}\") failed: {}", file, line, path, describe(db, result));
  throw SqliteError(result, what, std::move(reason));
}

void report_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line) noexcept {
  // stdio and SQLite's static strings only: nothing here may throw.
  const char* text = sqlite3_errstr(result);
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : "";
  std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: %s (%s)\n", file, line, call, text, msg);
}

}  // namespace detail
}  // namespace fusetune::db
