#include "worker/plan_prebuild.hpp"

#include <algorithm>
#include <chrono>

#include "gpu/driver_api.hpp"

namespace fusetune::worker {

namespace {
using Clock = std::chrono::steady_clock;
}

PlanPrebuilder::~PlanPrebuilder() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queued_.clear();
  }
  changed_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void PlanPrebuilder::ask(const worker::GraphDesc& d, const codegen::EngineKey& key) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    Job job{d, key};
    if (stop_ || asked_.count(job) != 0) return;
    asked_[job] = true;
    queued_.push_back(std::move(job));
    if (threads_.empty())
      for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { loop(); });
  }
  changed_.notify_all();
}

std::unique_ptr<PlanPrebuilder::Built> PlanPrebuilder::take(const worker::GraphDesc& d, const codegen::EngineKey& key,
                                                            double* waited_s) {
  const auto t0 = Clock::now();
  const Job job{d, key};
  std::unique_lock<std::mutex> lock(mutex_);
  for (auto it = queued_.begin(); it != queued_.end(); ++it) {
    if (*it == job) {
      queued_.erase(it);
      return nullptr;
    }
  }
  changed_.wait(lock, [&] { return std::find(building_.begin(), building_.end(), job) == building_.end(); });
  if (waited_s) *waited_s = std::chrono::duration<double>(Clock::now() - t0).count();
  auto it = built_.find(job);
  if (it == built_.end()) return nullptr;
  auto out = std::move(it->second);
  built_.erase(it);
  return out;
}

void PlanPrebuilder::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return stop_ || (queued_.empty() && building_.empty()); });
}

void PlanPrebuilder::settle() {
  std::unique_lock<std::mutex> lock(mutex_);
  queued_.clear();
  changed_.wait(lock, [&] { return building_.empty(); });
}

std::unique_ptr<PlanPrebuilder::Built> PlanPrebuilder::build(const Job& job) const {
  auto b = std::make_unique<Built>();
  const auto t0 = Clock::now();
  try {
    b->handle.emplace();
    b->handle->set_stream(stream_);
    b->graph = std::make_unique<worker::CudnnGraph>(b->handle->get(), job.first);
    (void)b->graph->prepare(job.second);
  } catch (...) {
    // Rethrown where the plan is run (GraphCache::run), as building it there would have thrown.
    b->graph.reset();
    b->error = std::current_exception();
  }
  b->build_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return b;
}

void PlanPrebuilder::loop() {
  // cuDNN binds to the current context: this thread's must be the worker's.
  const bool current = gpu::driver().cuCtxSetCurrent(ctx_) == CUDA_SUCCESS;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (stop_) return;
    const Job job = queued_.front();
    queued_.pop_front();
    building_.push_back(job);
    lock.unlock();
    std::unique_ptr<Built> b;
    if (current) {
      b = build(job);
    } else {
      b = std::make_unique<Built>();  // nothing built: take() hands back nullptr, the caller builds
    }
    lock.lock();
    if (b->graph || b->error) built_[job] = std::move(b);
    building_.erase(std::find(building_.begin(), building_.end(), job));
    changed_.notify_all();
  }
}

}  // namespace fusetune::worker
