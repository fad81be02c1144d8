#include "tune/fleet/lanes.hpp"

#include <stdexcept>

namespace fusetune::tune {

LaneRunner::~LaneRunner() {
  // Destroyed with requests still out only when the tune ends in an error: they are cancelled
  // (their workers killed) rather than waited for, up to a hung variant's timeout.
  cancel_ = true;
  for (auto& s : slots_)
    if (s.thread.joinable()) s.thread.join();
}

void LaneRunner::start(size_t l, Lane& lane, nlohmann::json msg, std::chrono::milliseconds timeout) {
  Slot& slot = slots_.at(l);
  if (slot.busy) throw std::logic_error("LaneRunner: lane started twice");
  if (slot.thread.joinable()) slot.thread.join();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    slot.done = false;
  }
  slot.thread = std::thread([this, l, worker = lane.worker.get(), msg = std::move(msg), timeout] {
    LaneAnswer a;
    try {
      a.reply = worker->request(msg, timeout, &cancel_);
    } catch (const WorkerLost& e) {
      a.lost = e;
    } catch (const std::exception& e) {  // e.g. a reply that is not JSON: the worker is not sane
      a.lost = WorkerLost{false, e.what()};
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    slots_[l].answer = std::move(a);
    slots_[l].done = true;
    answered_.notify_all();
  });
  slot.busy = true;  // only once the thread runs: a lane whose thread did not start stays idle
}

size_t LaneRunner::wait_any() {
  std::unique_lock<std::mutex> lock(mutex_);
  bool any = false;
  for (const auto& s : slots_) any = any || s.busy;
  if (!any) throw std::logic_error("LaneRunner: wait_any with no lane started");
  size_t found = slots_.size();
  answered_.wait(lock, [&] {
    for (size_t l = 0; l < slots_.size(); ++l)
      if (slots_[l].busy && slots_[l].done) {
        found = l;
        return true;
      }
    return false;
  });
  return found;
}

LaneAnswer LaneRunner::take(size_t l) {
  Slot& slot = slots_.at(l);
  if (!slot.busy) throw std::logic_error("LaneRunner: take on an idle lane");
  {
    std::unique_lock<std::mutex> lock(mutex_);
    answered_.wait(lock, [&] { return slot.done; });
  }
  slot.thread.join();
  slot.busy = false;
  return std::move(slot.answer);
}

}  // namespace fusetune::tune
