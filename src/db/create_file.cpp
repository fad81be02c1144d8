#include "db/create_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::db {

namespace {

// Removes the temporary file and whatever SQLite left beside it, however the build ends.
class TempFiles {
 public:
  explicit TempFiles(std::string path) : path_(std::move(path)) {}
  ~TempFiles() {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) (void)::unlink((path_ + suffix).c_str());
  }
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;

 private:
  std::string path_;
};

}  // namespace

bool create_database_file(const std::string& path, const std::function<void(const Connection&)>& fill) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / fmt::format(".{}.fusetune-XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    throw InputError(fmt::format("tuning database {}: cannot create it ({})", path, std::strerror(errno)));
  const TempFiles cleanup(tmp);
  // mkstemp makes the file 0600: a database gets the permissions of a plain create (umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  {
    const Connection conn = Connection::open(tmp, SQLITE_OPEN_READWRITE);
    fill(conn);
  }  // the last connection closes: SQLite checkpoints the WAL into the file and removes it
  if (::link(tmp.c_str(), path.c_str()) == 0) return true;
  if (errno == EEXIST) return false;
  // A file system without hard links: a rename that still never replaces a file.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno == EEXIST) return false;
  throw InputError(fmt::format("tuning database {}: cannot create it ({})", path, std::strerror(errno)));
}

}  // namespace fusetune::db
