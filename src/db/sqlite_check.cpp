#include "db/sqlite_check.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace fusetune::db {

namespace {

ExitCode exit_code_for(int result) noexcept {
  const int primary = result & 0xff;  // extended codes carry the primary one in the low byte
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ? ExitCode::bad_input : ExitCode::failure;
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

}  // namespace

SqliteError::SqliteError(int result, const std::string& what) : Error(exit_code_for(result), what), result_(result) {}

namespace detail {

void throw_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line) {
  throw SqliteError(result, fmt::format("{}:{}: {} failed: {}", file, line, call, describe(db, result)));
}

void report_sqlite_error(sqlite3* db, int result, const char* call, const char* file, int line) noexcept {
  // stdio and SQLite's static strings only: nothing here may throw.
  const char* text = sqlite3_errstr(result);
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : "";
  std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: %s (%s)\n", file, line, call, text, msg);
}

}  // namespace detail
}  // namespace fusetune::db
