#include "tune/fleet/worker_fleet.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "protocol/limits_json.hpp"

namespace fusetune::tune {

void throw_if_error(const nlohmann::json& reply, const std::string& what) {
  if (protocol::reply_kind(reply) != protocol::ReplyKind::error) return;
  const protocol::ErrorReply e = protocol::error_reply_from_json(reply);
  if (e.exit_code == ExitCode::no_gpu) throw NoGpuError(e.error);
  throw Error(e.exit_code, fmt::format("{}: {}", what, e.error));
}

WorkerFleet::WorkerFleet(const RunContext& ctx, protocol::SetupRequest setup) : ctx_(ctx), setup_(std::move(setup)) {}

std::unique_ptr<WorkerClient> WorkerFleet::make_worker() const {
  return std::make_unique<WorkerClient>(std::vector<std::string>{ctx_.opt.worker_exe, "__worker"});
}

protocol::SetupRequest WorkerFleet::setup_for(int device) const {
  protocol::SetupRequest s = setup_;
  s.device = device;
  return s;
}

void WorkerFleet::start_first() { lanes_.push_back(Lane{ctx_.opt.device, make_worker()}); }

std::pair<nlohmann::json, protocol::DeviceReply> WorkerFleet::describe_first() {
  nlohmann::json dev;
  try {
    dev = lanes_[0].worker->request(to_json(protocol::DeviceRequest{ctx_.opt.device}), seconds(120));
  } catch (const WorkerLost& e) {
    throw Error(ExitCode::failure, fmt::format("GPU worker failed to start: {}", e.reason));
  }
  throw_if_error(dev, "device");
  first_ = protocol::device_reply_from_json(dev);
  return {std::move(dev), first_};
}

void WorkerFleet::start_more() {
  std::vector<int> more = ctx_.opt.more_devices;
  if (ctx_.opt.all_devices) {
    more.clear();
    for (int d = 0; d < first_.count; ++d)
      if (d != ctx_.opt.device) more.push_back(d);
  }
  for (int d : more) {
    Lane lane{d, make_worker(), false};
    try {
      lane.worker->send(to_json(protocol::DeviceRequest{d}));
      lane.worker->send(to_json(setup_for(d)));
      lane.setup_sent = true;
      ctx_.trace(fmt::format("setup asked of GPU {}'s worker", d));
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker for device {} failed to start: {}", d, e.reason));
    }
    lanes_.push_back(std::move(lane));
  }
  for (const Lane& lane : lanes_) ctx_.report.devices.push_back(lane.device);
  runner_ = std::make_unique<LaneRunner>(lanes_.size());
  tags_.assign(lanes_.size(), 0);
}

// Asked for with the device phase; by the end of the compile phase they are in. The CUBINs are
// compiled for the first GPU's architecture, and the first passes of all GPUs are ranked together.
void WorkerFleet::check_lanes() {
  for (size_t l = 1; l < lanes_.size(); ++l) {
    Lane& lane = lanes_[l];
    if (lane.described) continue;
    nlohmann::json reply;
    try {
      reply = lane.worker->receive(seconds(120));
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker for device {} failed to start: {}", lane.device, e.reason));
    }
    throw_if_error(reply, fmt::format("device {}", lane.device));
    lane.described = true;
    const protocol::DeviceReply dev = protocol::device_reply_from_json(reply);
    const gpu::DeviceLimits& limits = dev.limits;
    const gpu::DeviceLimits& first = first_.limits;
    if (dev.name != first_.name || limits.arch_flag() != first.arch_flag() || limits.sm_count != first.sm_count)
      throw Error(ExitCode::bad_input,
                  fmt::format("--devices: GPU {} is a {} ({}, {} SMs) and GPU {} a {} ({}, {} SMs): one tune "
                              "measures one kind of GPU",
                              lane.device, dev.name, limits.arch_flag(), limits.sm_count, lanes_[0].device, first_.name,
                              first.arch_flag(), first.sm_count));
  }
}

void WorkerFleet::ready(size_t width) {
  check_lanes();
  for (size_t l = 1; l < std::min(width, lanes_.size()); ++l)
    if (!lanes_[l].session) ensure_session(l);
}

// The session's setup (its context and cuDNN handle, the reference kernels' compile, the input
// draws and their float64 references: 0.5-0.8 s on the H200) runs in the worker while this
// process generates and compiles.
void WorkerFleet::send_setup() {
  try {
    lanes_[0].worker->send(to_json(setup_));
    lanes_[0].setup_sent = true;
    ctx_.trace("setup asked of GPU 0's worker");
  } catch (const WorkerLost&) {
    // ensure_session() asks again and reports what it finds
  }
}

void WorkerFleet::ensure_session(size_t l) {
  Lane& lane = lanes_.at(l);
  if (lane.session) return;
  if (l == 0) ctx_.progress("preparing inputs and float64 reference", 0, 1, "");
  const auto t0 = Clock::now();
  nlohmann::json info;
  try {
    if (!lane.setup_sent) lane.worker->send(to_json(setup_for(lane.device)));
    lane.setup_sent = false;
    ctx_.trace(fmt::format("waiting for lane {}'s setup", l));
    info = lane.worker->receive(seconds(900));
  } catch (const WorkerLost& e) {
    throw Error(ExitCode::failure,
                fmt::format("GPU worker{} lost during setup: {}",
                            l == 0 ? std::string() : fmt::format(" for device {}", lane.device), e.reason));
  }
  throw_if_error(info, l == 0 ? std::string("setup") : fmt::format("setup of device {}", lane.device));
  const protocol::SetupReply sr = protocol::setup_reply_from_json(info);
  if (l == 0 && on_first_session_) on_first_session_(sr);
  ctx_.add_note(fmt::format("worker setup{} {:.2f} s (context and cuDNN handle {:.2f} s, input draws and their float64 "
                            "references {:.2f} s), {:.2f} s of it waited for",
                            l == 0 ? std::string() : fmt::format(" on GPU {}", lane.device), sr.setup_s, sr.handles_s,
                            sr.draws_s, std::chrono::duration<double>(Clock::now() - t0).count()));
  lane.session = true;
  // A worker that did not say when it began (begun_s 0) gets "?", not a time before the tune.
  const std::string begun = sr.begun_s > 0 ? fmt::format("{:.3f}", ctx_.trace.at(sr.begun_s)) : std::string("?");
  ctx_.trace(fmt::format("lane {}'s setup in: the worker began it at {} and took {:.3f} s (context and handle {:.3f}, "
                         "draws {:.3f})",
                         l, begun, sr.setup_s, sr.handles_s, sr.draws_s));
}

// The new worker's setup runs while the other GPUs go on; ensure_session(l) takes the answer when
// the lane is next used.
void WorkerFleet::restart(size_t l) {
  Lane& lane = lanes_.at(l);
  lane.worker->restart();
  lane.session = false;
  lane.setup_sent = false;
  lane.asked_ahead.clear();  // the new worker has built nothing
  try {
    lane.worker->send(to_json(setup_for(lane.device)));
    lane.setup_sent = true;
    ctx_.trace(fmt::format("lane {}'s worker replaced; setup asked of GPU {}'s worker", l, lane.device));
  } catch (const WorkerLost&) {
    // ensure_session() asks again and reports what it finds
  }
}

void WorkerFleet::quit() {
  for (Lane& lane : lanes_) lane.worker->quit(seconds(10));
}

int WorkerFleet::restarts() const {
  int n = 0;
  for (const Lane& lane : lanes_) n += lane.worker->restarts();
  return n;
}

nlohmann::json WorkerFleet::request_first(const nlohmann::json& msg, std::chrono::milliseconds timeout) {
  return lanes_.at(0).worker->request(msg, timeout);
}

bool WorkerFleet::ask_ahead(size_t l, const std::string& name) { return lanes_.at(l).asked_ahead.insert(name).second; }

void WorkerFleet::start(size_t l, size_t tag, nlohmann::json msg, std::chrono::milliseconds timeout) {
  tags_.at(l) = tag;
  runner_->start(l, lanes_[l], std::move(msg), timeout);
}

std::pair<size_t, LaneAnswer> WorkerFleet::take(size_t l) {
  LaneAnswer a = runner_->take(l);
  return {tags_.at(l), std::move(a)};
}

}  // namespace fusetune::tune
