#include "tune/compile_queue.hpp"

#include <algorithm>

namespace fusetune::tune {

CompileQueue::CompileQueue(std::vector<codegen::Variant> variants, std::vector<size_t> order, gpu::DeviceLimits limits,
                           CompileAllOptions opts)
    : variants_(std::move(variants)),
      order_(std::move(order)),
      limits_(std::move(limits)),
      opts_(std::move(opts)),
      state_(variants_.size(), State::queued),
      results_(variants_.size()) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  unsigned jobs = opts_.jobs ? opts_.jobs : std::max(1u, cores > 2 ? cores - 2 : 1u);
  jobs = unsigned(std::min<size_t>(jobs, order_.size()));
  for (unsigned j = 0; j < jobs; ++j) pool_.emplace_back([this] { work(); });
}

CompileQueue::~CompileQueue() {
  stop();
  pool_.clear();  // joins: each thread finishes the compile it is in
}

void CompileQueue::stop() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stopped_ = true;
}

void CompileQueue::prefer(std::vector<size_t> first) {
  const std::lock_guard<std::mutex> lock(mutex_);
  preferred_ = std::move(first);
}

bool CompileQueue::done(size_t i) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return state_.at(i) == State::done;
}

void CompileQueue::work() {
  for (;;) {
    size_t i = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return;
      const auto preferred = std::find_if(preferred_.begin(), preferred_.end(),
                                          [&](size_t p) { return p < state_.size() && state_[p] == State::queued; });
      if (preferred != preferred_.end()) {
        i = *preferred;
      } else {
        while (next_ < order_.size() && state_.at(order_[next_]) != State::queued) ++next_;
        if (next_ == order_.size()) return;
        i = order_[next_++];
      }
      state_[i] = State::running;
    }
    compile_and_file(i);
  }
}

void CompileQueue::compile_and_file(size_t i) {
  protocol::VariantResult r = compile_variant(variants_[i], limits_, opts_);
  if (opts_.on_done) opts_.on_done(r);
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    results_[i] = std::move(r);
    state_[i] = State::done;
  }
  landed_.notify_all();
}

const protocol::VariantResult& CompileQueue::get(size_t i) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (state_.at(i) == State::queued) {
    state_[i] = State::running;
    lock.unlock();
    compile_and_file(i);
    lock.lock();
  }
  landed_.wait(lock, [&] { return state_[i] == State::done; });
  return results_[i];
}

}  // namespace fusetune::tune
