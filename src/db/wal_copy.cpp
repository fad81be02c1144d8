#include "db/wal_copy.hpp"

#include <filesystem>

#include "db/sqlite_check.hpp"

namespace fusetune::db {

WalCopy::WalCopy(const std::string& path) : copy_((dir_.path() / "copy.db").string()) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::copy_file(path, copy_, ec);
  if (!ec) fs::copy_file(path + "-wal", copy_ + "-wal", ec);
  if (ec) throw SqliteError(SQLITE_CANTOPEN, "copying the database and its -wal: " + ec.message());
}

Connection WalCopy::open() const { return Connection::open(copy_, SQLITE_OPEN_READWRITE); }

}  // namespace fusetune::db
