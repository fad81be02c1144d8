#pragma once
// The tune's workers: one process per GPU (`--devices`), each a lane that runs one request at a
// time (lanes.hpp). The fleet owns them, their sessions (the problem's inputs and references in
// each worker), the run's cuDNN conv choices that every worker is set up with, and which lane
// runs what; the caller files the answers (run/measurer.hpp). Lane 0, the first GPU, runs
// everything but the solutions' first passes, which every lane shares.
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "protocol/protocol.hpp"
#include "protocol/replies.hpp"
#include "tune/fleet/lanes.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

// Throws NoGpuError / Error when `reply` is the worker's error reply to a request that must work.
void throw_if_error(const nlohmann::json& reply, const std::string& what);

class WorkerFleet {
 public:
  // `setup`: the session every worker is asked for (its device set per lane).
  WorkerFleet(const RunContext& ctx, protocol::SetupRequest setup);
  WorkerFleet(const WorkerFleet&) = delete;
  WorkerFleet& operator=(const WorkerFleet&) = delete;

  // Starts the first GPU's worker.
  void start_first();
  // Reads the first GPU's device description (the raw reply, for the
  // report and the device cache, and typed). Throws when the worker cannot describe it.
  std::pair<nlohmann::json, protocol::DeviceReply> describe_first();
  // A worker per further GPU (TuneOptions::more_devices, or every GPU for --devices all), asked
  // at once for its description and its session; the lanes' devices go to the report.
  void start_more();
  // Reads the further GPUs' descriptions; each must be the first GPU's kind (throws otherwise).
  void check_lanes();
  // The first `width` lanes with their sessions.
  void ready(size_t width);
  // Asks the first GPU's worker for its session now; ensure_session() takes the answer.
  void send_setup();
  // Lane l's session: the answer to the setup asked for earlier, or to one asked for now.
  void ensure_session(size_t l);
  // Called with lane 0's setup reply when its session begins (the copy rate it measured).
  void on_first_session(std::function<void(const protocol::SetupReply&)> fn) { on_first_session_ = std::move(fn); }
  // A fresh worker for lane l (after a fault or a hang), its setup asked for at once.
  void restart(size_t l);
  void quit();

  [[nodiscard]] size_t size() const { return lanes_.size(); }
  [[nodiscard]] int device(size_t l) const { return lanes_.at(l).device; }
  [[nodiscard]] bool has_session(size_t l) const { return lanes_.at(l).session; }
  [[nodiscard]] int restarts() const;
  // The run's cuDNN conv choices: a worker set up (again) starts from them.
  [[nodiscard]] protocol::ConvChoices& conv_choices() { return setup_.conv_choices; }

  // Lane 0's worker answers `msg` (blocking; throws WorkerLost).
  nlohmann::json request_first(const nlohmann::json& msg, std::chrono::milliseconds timeout);
  // Whether lane l's worker was asked to build `name`'s cuDNN plan ahead before (and now is).
  bool ask_ahead(size_t l, const std::string& name);

  // Lane l (idle) sends `msg` and returns at once; `tag` comes back with the answer.
  void start(size_t l, size_t tag, nlohmann::json msg, std::chrono::milliseconds timeout);
  [[nodiscard]] bool busy(size_t l) const { return runner_->busy(l); }
  // Blocks until some started lane has its answer; returns that lane (take() it).
  [[nodiscard]] size_t wait_any() { return runner_->wait_any(); }
  // Lane l's answer (waiting for it) and the tag it was started with.
  [[nodiscard]] std::pair<size_t, LaneAnswer> take(size_t l);

 private:
  std::unique_ptr<WorkerClient> make_worker() const;
  protocol::SetupRequest setup_for(int device) const;

  const RunContext& ctx_;
  protocol::SetupRequest setup_;
  protocol::DeviceReply first_;
  std::vector<Lane> lanes_;
  std::unique_ptr<LaneRunner> runner_;
  std::vector<size_t> tags_;  // per lane: what it runs
  std::function<void(const protocol::SetupReply&)> on_first_session_;
};

}  // namespace fusetune::tune
