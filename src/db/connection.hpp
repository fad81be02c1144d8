#pragma once
// An open SQLite connection: a move-only owner of one sqlite3* (STYLE.md 5), closed with
// sqlite3_close_v2 exactly once. Extended result codes are on, so errors name the exact
// constraint or I/O fault.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fusetune::db {

class Connection {
 public:
  // flags: SQLITE_OPEN_READONLY, or SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE. Throws
  // SqliteError naming the path when SQLite refuses.
  static Connection open(const std::string& path, int flags);
  // Read-only, and told the file cannot change while open (SQLite's `immutable`): no locks, and
  // no -wal or -shm file is ever created beside it. For looking at a file that may not be ours,
  // and for a database in a folder nobody can write.
  static Connection open_immutable(const std::string& path);

  [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }

  // Runs one or more statements that return no rows; errors carry the SQL's start.
  void exec(std::string_view sql) const;
  // The first column of the first row of a one-value query (PRAGMA user_version, COUNT(*)).
  [[nodiscard]] int64_t query_int64(std::string_view sql) const;
  [[nodiscard]] std::string query_text(std::string_view sql) const;
  [[nodiscard]] int64_t last_insert_rowid() const noexcept { return sqlite3_last_insert_rowid(db_.get()); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  explicit Connection(sqlite3* db) : db_(db) {}
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace fusetune::db
