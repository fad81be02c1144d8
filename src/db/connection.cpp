#include "db/connection.hpp"

#include <fmt/format.h>

#include "db/sqlite_check.hpp"
#include "db/statement.hpp"

namespace fusetune::db {

void Connection::Closer::operator()(sqlite3* db) const noexcept {
  // _v2: statements still alive (a bug) would make sqlite3_close fail and leak the handle;
  // close_v2 defers the close until they are finalized instead.
  FT_SQLITE_CALL_NOEXCEPT(db, sqlite3_close_v2(db));
}

Connection Connection::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // Even a failed open may allocate a handle (it carries the message): own it either way.
  Connection conn(raw);
  if (rc != SQLITE_OK) detail::throw_open_error(raw, rc, path, FUSETUNE_FILE, __LINE__);
  FT_SQLITE_CALL(raw, sqlite3_extended_result_codes(raw, 1));
  return conn;
}

Connection Connection::open_immutable(const std::string& path) {
  // As a URI: characters that mean something in one are escaped.
  std::string uri = "file:";
  for (const char ch : path) {
    if (ch == '%' || ch == '?' || ch == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(ch));
    } else {
      uri += ch;
    }
  }
  uri += "?mode=ro&immutable=1";
  return open(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

void Connection::exec(std::string_view sql) const {
  // sqlite3_exec needs a NUL-terminated string; string_view does not promise one.
  const std::string text(sql);
  const int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    const std::string call = fmt::format("exec \"{}\"", text.substr(0, 80) + (text.size() > 80 ? "..." : ""));
    detail::throw_sqlite_error(db_.get(), rc, call.c_str(), FUSETUNE_FILE, __LINE__);
  }
}

int64_t Connection::query_int64(std::string_view sql) const {
  Statement s(*this, sql);
  return s.step() ? s.column_int64(0) : 0;
}

std::string Connection::query_text(std::string_view sql) const {
  Statement s(*this, sql);
  return s.step() ? s.column_text(0) : std::string();
}

}  // namespace fusetune::db
