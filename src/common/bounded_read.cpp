#include "common/bounded_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/terminal_text.hpp"

namespace fusetune {

namespace {

// What a file that is not a regular file is, for the message.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string size_text(size_t bytes) {
  if (bytes >= (size_t(1) << 20) && bytes % (size_t(1) << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_bounded_file(const std::string& path, std::string_view what, size_t limit) {
  const auto refuse = [&](const std::string& why) {
    return InputError(fmt::format("cannot read {} {}: {}", what, text::printable(path), why));
  };
  // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever; what is opened is
  // looked at (fstat, the file itself, no race with a rename) before a byte is read.
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (raw < 0) throw refuse(errno == ENOENT ? std::string("no such file") : std::strerror(errno));
  const Fd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw refuse(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw refuse("it is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw refuse(fmt::format("it is {}, not a regular file", kind_of(st.st_mode)));
  if (st.st_size > 0 && size_t(st.st_size) > limit)
    throw refuse(fmt::format("larger than the {} limit ({} bytes)", size_text(limit), st.st_size));
  std::string bytes;
  bytes.reserve(st.st_size > 0 ? size_t(st.st_size) : 0);
  char buf[1 << 16];
  for (;;) {
    const size_t want = std::min(sizeof buf, limit + 1 - bytes.size());
    const ssize_t n = ::read(fd.get(), buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw refuse(std::strerror(errno));
    }
    if (n == 0) break;
    bytes.append(buf, size_t(n));
    if (bytes.size() > limit) throw refuse(fmt::format("larger than the {} limit", size_text(limit)));
  }
  return bytes;
}

}  // namespace fusetune
