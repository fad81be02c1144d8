#pragma once
// Several GPUs of one host (`tune --devices`): one worker process per GPU, each answering one
// request at a time. The tuner hands a request to a lane and goes on (taking compiles, filing
// other lanes' answers, picking what to measure next); the request waits for its answer on a
// thread of its own, because WorkerClient::request blocks until the worker answers or times out.
// Only that thread touches the lane's worker until take() hands the answer back.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tune/worker_client.hpp"

namespace fusetune::tune {

struct Lane {
  int device = 0;  // the GPU's ordinal
  std::unique_ptr<WorkerClient> worker;
  bool described = true;    // its `device` answer is in (false: asked for, not read yet)
  bool session = false;     // the worker holds the problem's session (inputs, references)
  bool setup_sent = false;  // its setup was asked for and the answer not read yet
  std::set<std::string> asked_ahead = {};  // variants whose cuDNN plans it was asked to build ahead
};

struct LaneAnswer {
  nlohmann::json reply;
  std::optional<WorkerLost> lost;  // the worker died or did not answer in time
};

class LaneRunner {
 public:
  explicit LaneRunner(size_t lanes) : slots_(lanes) {}
  ~LaneRunner();
  LaneRunner(const LaneRunner&) = delete;
  LaneRunner& operator=(const LaneRunner&) = delete;

  // Sends `msg` to lane l's worker (the lane must be idle) and returns at once.
  void start(size_t l, Lane& lane, nlohmann::json msg, std::chrono::milliseconds timeout);
  // Blocks until some started lane has its answer, and returns that lane (still busy: take()).
  [[nodiscard]] size_t wait_any();
  // Blocks until lane l's answer is in, and hands it back; the lane is idle again.
  [[nodiscard]] LaneAnswer take(size_t l);

  [[nodiscard]] bool busy(size_t l) const { return slots_.at(l).busy; }
  [[nodiscard]] size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    std::thread thread;
    bool busy = false;  // started and not taken (main thread only)
    bool done = false;  // the answer is in (guarded by mutex_)
    LaneAnswer answer;
  };
  std::vector<Slot> slots_;
  std::atomic<bool> cancel_{false};  // set on destruction: requests still out end within a second
  std::mutex mutex_;
  std::condition_variable answered_;
};

}  // namespace fusetune::tune
