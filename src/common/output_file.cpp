#include "common/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
  throw Error(ExitCode::failure, fmt::format("cannot write '{}': {} ({})", path, what, std::strerror(err)));
}

// Every byte to fd, retrying short writes and interrupts.
bool write_all(int fd, std::string_view bytes, int& err) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      return false;
    }
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

// Closes fd and removes `path` when `remove` (a temporary file that will not be renamed).
class Fd {
 public:
  Fd(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Closes the descriptor; the caller checks the result.
  int close() {
    const int r = ::close(fd_);
    fd_ = -1;
    return r;
  }
  void keep() { path_.clear(); }  // renamed: nothing to remove

 private:
  int fd_;
  std::string path_;
};

void write_direct(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_APPEND);
  if (fd < 0) fail(path, "opening it", errno);
  Fd f(fd, "");
  int err = 0;
  if (!write_all(f.get(), bytes, err)) fail(path, "writing", err);
  if (f.close() != 0) fail(path, "closing it", errno);
}

}  // namespace

void write_output_file(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    write_stdout(bytes);
    return;
  }
  if (path.empty()) throw InputError("an output path is empty");
  // Through symbolic links to what they name (/dev/stdout, a link to a file): the link stays.
  std::string real = path;
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0) {
    std::error_code ec;
    const fs::path resolved = fs::canonical(path, ec);
    struct stat st {};
    // A link that resolves to no path (/proc/self/fd/1 on a pipe) or to something that is not
    // a regular file (a device, a pipe): write into it, never replace it.
    if (ec || ::stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      if (!ec && ::stat(resolved.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw InputError(fmt::format("cannot write '{}': it is a directory", path));
      write_direct(path, bytes);
      return;
    }
    real = resolved.string();
  }
  const fs::path target(real);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // fmt, not operator+: GCC 12 -O3 flags the string concatenation (-Wrestrict false positive).
  std::string tmpl = (dir / fmt::format(".{}.fusetune-XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(path, "creating a temporary file beside it", errno);
  Fd f(fd, tmpl);
  // mkstemp makes the file 0600: keep the replaced file's permissions, or give a new file those
  // of a plain create (umask applies).
  struct stat old {};
  if (::stat(real.c_str(), &old) == 0) {
    (void)::fchmod(f.get(), old.st_mode & 07777);
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    (void)::fchmod(f.get(), 0666 & ~mask);
  }
  int err = 0;
  if (!write_all(f.get(), bytes, err)) fail(path, "writing", err);
  if (::fsync(f.get()) != 0) fail(path, "flushing it to disk", errno);
  if (f.close() != 0) fail(path, "closing it", errno);
  if (::rename(tmpl.c_str(), real.c_str()) != 0) fail(path, "moving the finished file into place", errno);
  f.keep();
}

void write_stdout(std::string_view bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
    throw Error(ExitCode::failure, fmt::format("cannot write to standard output ({})", std::strerror(errno)));
}

std::string finish_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout)) return "";
  return fmt::format("cannot write to standard output ({})", errno ? std::strerror(errno) : "write error");
}

}  // namespace fusetune
