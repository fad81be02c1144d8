#include "common/output_guard.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/terminal_text.hpp"

namespace fusetune {

namespace {

namespace fs = std::filesystem;

// The path with every link resolved. weakly_canonical stops at a dangling link (its target does
// not exist yet): that link is followed by hand, so `-o link` where link -> tuning.db-wal (made
// only while a writer runs) still resolves to the -wal. 40 hops, as the kernel allows.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal();
  for (int hop = 0; hop < 40; ++hop) {
    const fs::path c = fs::weakly_canonical(p, ec);
    if (ec) return p.lexically_normal();
    if (!fs::is_symlink(fs::symlink_status(c, ec)) || ec) return c;
    const fs::path target = fs::read_symlink(c, ec);
    if (ec) return c;
    p = target.is_absolute() ? target : c.parent_path() / target;
  }
  return p.lexically_normal();
}

struct Identity {
  std::optional<std::pair<dev_t, ino_t>> inode;  // where the file exists
  fs::path path;
};

Identity identify(const std::string& path) {
  Identity id{.inode = std::nullopt, .path = resolved(path)};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) id.inode = std::make_pair(st.st_dev, st.st_ino);
  return id;
}

bool same(const Identity& a, const Identity& b) {
  if (a.inode && b.inode) return *a.inode == *b.inode;
  return a.path == b.path;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) { return same(identify(a), identify(b)); }

void refuse_database_output(const std::string& output, const std::string& db_path) {
  if (output.empty() || output == "-" || db_path.empty() || db_path == ":memory:") return;
  const Identity out = identify(output);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    if (!same(out, identify(db_path + suffix))) continue;
    throw InputError(fmt::format("{} is the tuning database{}: write the output to another file",
                                 text::printable(output), *suffix ? fmt::format("'s {} file", suffix) : ""));
  }
}

}  // namespace fusetune
