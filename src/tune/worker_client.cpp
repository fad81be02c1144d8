#include "tune/worker_client.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace fusetune::tune {

namespace {

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw WorkerLost{false, fmt::format("worker pipe closed ({})", std::strerror(errno))};
    off += size_t(n);
  }
}

}  // namespace

WorkerClient::WorkerClient(std::vector<std::string> argv) : argv_(std::move(argv)) {
  // A dead worker must not kill us with SIGPIPE when we write the next request.
  ::signal(SIGPIPE, SIG_IGN);
  start();
}

WorkerClient::~WorkerClient() { stop(); }

void WorkerClient::start() {
  reap_released();
  int in_pipe[2];   // parent -> worker stdin
  int out_pipe[2];  // worker stdout -> parent
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw Error(ExitCode::failure, fmt::format("cannot create worker pipes: {}", std::strerror(errno)));

  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ < 0) throw Error(ExitCode::failure, fmt::format("cannot fork worker: {}", std::strerror(errno)));
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  buffer_.clear();
}

void WorkerClient::stop() noexcept {
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

void WorkerClient::quit(std::chrono::milliseconds timeout) noexcept {
  try {
    if (pid_ > 0) request({{"cmd", "quit"}}, timeout);
  } catch (...) {  // WorkerLost, or no memory for the request: stop() below kills it
    stop();
    return;
  }
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    try {
      released_.push_back(pid_);
    } catch (...) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  pid_ = -1;
  reap_released();
}

void WorkerClient::reap_released() noexcept {
  std::erase_if(released_, [](pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, WNOHANG) != 0;  // reaped, or not ours any more
  });
}

void WorkerClient::restart() {
  stop();
  ++restarts_;
  start();
}

std::string WorkerClient::describe_exit() {
  if (pid_ <= 0) return "worker not running";
  int status = 0;
  // Give a dying worker a moment to be reaped so we can say how it ended.
  for (int i = 0; i < 50; ++i) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFSIGNALED(status)) return fmt::format("worker killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
      if (WIFEXITED(status)) return fmt::format("worker exited with status {}", WEXITSTATUS(status));
      return "worker ended";
    }
    ::usleep(20000);
  }
  return "worker closed its output";
}

nlohmann::json WorkerClient::request(const nlohmann::json& msg, std::chrono::milliseconds timeout,
                                     const std::atomic<bool>* cancel) {
  send(msg);
  return receive(timeout, cancel);
}

void WorkerClient::send(const nlohmann::json& msg) {
  if (pid_ <= 0) throw WorkerLost{false, "worker not running"};
  write_all(to_worker_, msg.dump() + "\n");
}

nlohmann::json WorkerClient::receive(std::chrono::milliseconds timeout, const std::atomic<bool>* cancel) {
  if (pid_ <= 0) throw WorkerLost{false, "worker not running"};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      try {
        return nlohmann::json::parse(line);
      } catch (const std::exception& e) {
        throw WorkerLost{false, fmt::format("unreadable reply from worker: {}", e.what())};
      }
    }
    if (cancel != nullptr && cancel->load()) {
      stop();
      throw WorkerLost{false, "cancelled: the tune ended before the worker answered"};
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      throw WorkerLost{true, fmt::format("no answer within {:.1f} s", double(timeout.count()) / 1000.0)};
    }
    pollfd pfd{from_worker_, POLLIN, 0};
    int r = ::poll(&pfd, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(from_worker_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = describe_exit();
      stop();
      throw WorkerLost{false, why};
    }
    buffer_.append(chunk, size_t(n));
  }
}

}  // namespace fusetune::tune
