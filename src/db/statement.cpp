#include "db/statement.hpp"

#include <limits>

#include <fmt/format.h>

#include "db/connection.hpp"
#include "db/sqlite_check.hpp"

namespace fusetune::db {

namespace {

int byte_count(std::string_view s) {
  if (s.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw SqliteError(SQLITE_TOOBIG, fmt::format("a value of {} bytes is too large for SQLite", s.size()));
  return static_cast<int>(s.size());
}

}  // namespace

void Statement::Finalizer::operator()(sqlite3_stmt* stmt) const noexcept {
  // sqlite3_finalize repeats the statement's last error; that error was already reported
  // (thrown) where it happened, so it is not reported again here.
  sqlite3_finalize(stmt);
}

Statement::Statement(const Connection& conn, std::string_view sql) : db_(conn.get()) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), byte_count(sql), 0, &raw, nullptr);
  stmt_.reset(raw);
  if (rc != SQLITE_OK) {
    const std::string call = fmt::format("prepare \"{}\"", sql.substr(0, 120));
    detail::throw_sqlite_error(db_, rc, call.c_str(), FUSETUNE_FILE, __LINE__);
  }
}

void Statement::fail(int rc, const char* what) const {
  const char* sql = stmt_ ? sqlite3_sql(stmt_.get()) : nullptr;
  const std::string call = fmt::format("{} \"{}\"", what, std::string_view(sql ? sql : "").substr(0, 120));
  detail::throw_sqlite_error(db_, rc, call.c_str(), FUSETUNE_FILE, __LINE__);
}

void Statement::bind(int index, int64_t value) {
  if (const int rc = sqlite3_bind_int64(stmt_.get(), index, value); rc != SQLITE_OK) fail(rc, "bind");
}

void Statement::bind(int index, double value) {
  if (const int rc = sqlite3_bind_double(stmt_.get(), index, value); rc != SQLITE_OK) fail(rc, "bind");
}

void Statement::bind(int index, std::string_view text) {
  // SQLITE_TRANSIENT: SQLite copies the bytes, so the caller's buffer may go away before step().
  const int rc = sqlite3_bind_text(stmt_.get(), index, text.data(), byte_count(text), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(rc, "bind");
}

void Statement::bind_blob(int index, std::string_view bytes) {
  // An empty view may have a null data(); SQLite would then bind NULL, not an empty blob.
  const int rc = bytes.empty() ? sqlite3_bind_zeroblob(stmt_.get(), index, 0)
                               : sqlite3_bind_blob(stmt_.get(), index, bytes.data(), byte_count(bytes), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(rc, "bind");
}

void Statement::bind_null(int index) {
  if (const int rc = sqlite3_bind_null(stmt_.get(), index); rc != SQLITE_OK) fail(rc, "bind");
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc, "step");
}

void Statement::reset() {
  // reset returns the last step's error again; that one was already thrown by step().
  sqlite3_reset(stmt_.get());
}

void Statement::clear_bindings() { sqlite3_clear_bindings(stmt_.get()); }

int Statement::column_count() const noexcept { return sqlite3_column_count(stmt_.get()); }
const char* Statement::column_name(int col) const noexcept { return sqlite3_column_name(stmt_.get(), col); }
int Statement::column_type(int col) const noexcept { return sqlite3_column_type(stmt_.get(), col); }
int64_t Statement::column_int64(int col) const noexcept { return sqlite3_column_int64(stmt_.get(), col); }
int Statement::column_int(int col) const noexcept { return sqlite3_column_int(stmt_.get(), col); }
double Statement::column_double(int col) const noexcept { return sqlite3_column_double(stmt_.get(), col); }

double Statement::column_real(int col) const noexcept {
  return column_is_null(col) ? std::numeric_limits<double>::quiet_NaN() : column_double(col);
}

std::string Statement::column_text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), col));
  // Length after the pointer: sqlite3_column_bytes after _text gives the text's byte count.
  const int n = sqlite3_column_bytes(stmt_.get(), col);
  return p != nullptr ? std::string(p, static_cast<size_t>(n)) : std::string();
}

std::string Statement::column_blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_.get(), col));
  const int n = sqlite3_column_bytes(stmt_.get(), col);
  return p != nullptr ? std::string(p, static_cast<size_t>(n)) : std::string();
}

}  // namespace fusetune::db
