#pragma once
// A database with committed pages still in its -wal, in a folder where its -shm cannot be made
// (a read-only mount): SQLite cannot read it through the WAL there, and an immutable read
// ignores the WAL (a file killed mid-checkpoint then reads as "malformed"). A private copy of
// the file and its -wal in a temporary folder can be read as SQLite reads it; the original is
// never touched.
#include <string>

#include "common/temp_dir.hpp"
#include "db/connection.hpp"

namespace fusetune::db {

class WalCopy {
 public:
  // Copies `path` and `path`-wal into a private folder. Throws SqliteError (SQLITE_CANTOPEN)
  // when the copy cannot be made.
  explicit WalCopy(const std::string& path);
  // A connection to the copy: read-write, so SQLite recovers the -wal into it.
  [[nodiscard]] Connection open() const;

 private:
  TempDir dir_{"fusetune-wal"};
  std::string copy_;
};

}  // namespace fusetune::db
