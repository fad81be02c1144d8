#pragma once
// A prepared statement: a move-only owner of one sqlite3_stmt* (STYLE.md 5), finalized
// exactly once. Parameters are bound by 1-based index, columns read by 0-based index (as in
// SQLite's C API). Errors carry the statement's SQL.
//
//   Statement s(conn, "SELECT id FROM problems WHERE key = ?1");
//   s.bind(1, key);
//   if (s.step()) id = s.column_int64(0);
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fusetune::db {

class Connection;

class Statement {
 public:
  Statement(const Connection& conn, std::string_view sql);

  void bind(int index, int64_t value);
  void bind(int index, int value) { bind(index, int64_t{value}); }
  void bind(int index, double value);  // NaN is stored as NULL by SQLite
  void bind(int index, std::string_view text);
  void bind(int index, const char* text) { bind(index, std::string_view(text)); }
  void bind(int index, const std::string& text) { bind(index, std::string_view(text)); }
  void bind_blob(int index, std::string_view bytes);
  void bind_null(int index);

  // Runs to the next row: true when one is there, false when done.
  bool step();
  // Ready to run again; bindings stay unless clear_bindings() is called.
  void reset();
  void clear_bindings();

  [[nodiscard]] int column_count() const noexcept;
  [[nodiscard]] const char* column_name(int col) const noexcept;
  [[nodiscard]] int column_type(int col) const noexcept;  // SQLITE_INTEGER, _FLOAT, _TEXT, _BLOB, _NULL
  [[nodiscard]] bool column_is_null(int col) const noexcept { return column_type(col) == SQLITE_NULL; }
  [[nodiscard]] int64_t column_int64(int col) const noexcept;
  [[nodiscard]] int column_int(int col) const noexcept;
  [[nodiscard]] double column_double(int col) const noexcept;
  // A REAL figure: NULL reads back as NaN, since SQLite stores a bound NaN as NULL.
  [[nodiscard]] double column_real(int col) const noexcept;
  [[nodiscard]] std::string column_text(int col) const;
  [[nodiscard]] std::string column_blob(int col) const;

  [[nodiscard]] sqlite3_stmt* get() const noexcept { return stmt_.get(); }

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const noexcept;
  };
  [[noreturn]] void fail(int rc, const char* what) const;
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

}  // namespace fusetune::db
