#pragma once
// The tuner's side of the worker protocol. Candidates run in a separate process because a
// faulting kernel poisons its CUDA context for good: the worker is started with fork+exec
// (a CUDA context does not survive fork), spoken to in JSON lines over pipes, and killed
// and replaced when it dies or stops answering. The worker never touches our stdout.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fusetune::tune {

// The worker died (fault, abort) or did not answer in time. `timed_out` tells which.
struct WorkerLost {
  bool timed_out = false;
  std::string reason;
};

class WorkerClient {
 public:
  // argv[0] is the executable (normally /proc/self/exe), the rest its arguments.
  explicit WorkerClient(std::vector<std::string> argv);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends one request and waits for its one-line reply. Throws WorkerLost when the worker
  // exits or the timeout passes; the worker is then dead and restart() is needed. `cancel`
  // (checked every second while waiting): set, the worker is killed and WorkerLost thrown, so a
  // tune that ends in an error does not wait out another GPU's hung variant.
  nlohmann::json request(const nlohmann::json& msg, std::chrono::milliseconds timeout,
                         const std::atomic<bool>* cancel = nullptr);
  // The two halves of request(), for a request answered while the caller works on (the tuner
  // sends the session's setup, then compiles): one receive() per send(), in order.
  void send(const nlohmann::json& msg);
  nlohmann::json receive(std::chrono::milliseconds timeout, const std::atomic<bool>* cancel = nullptr);

  // Asks the worker to quit and, once it has said so, lets it finish exiting on its own: a
  // process that initialised the CUDA driver spends a while releasing it, and nothing we do
  // next needs that finished (a stored answer is the whole run). The process is reaped at the
  // next start() or, once we exit, by init. A worker that does not acknowledge is killed.
  void quit(std::chrono::milliseconds timeout) noexcept;

  void restart();
  [[nodiscard]] bool alive() const { return pid_ > 0; }
  [[nodiscard]] int restarts() const { return restarts_; }

 private:
  void start();
  void stop() noexcept;
  std::string describe_exit();
  static void reap_released() noexcept;

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::string buffer_;
  int restarts_ = 0;
  static inline std::vector<pid_t> released_;  // quit, not yet reaped
};

}  // namespace fusetune::tune
