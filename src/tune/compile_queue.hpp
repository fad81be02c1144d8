#pragma once
// Variants compiled on a pool of threads in an order of the caller's choosing, while the caller
// takes each result when it needs it: the guided search measures the variants it picks as soon
// as they are compiled instead of waiting for the whole space (on the H200 a cold compile of
// kernelbench-31's 162 solutions took about 8 s of 16 cores, and the search measured 22 of
// them: docs/runs/2026-12-03/call54-devcache.tar.xz). get() compiles a variant no pool thread has
// started on the calling thread; stop() lets the pool finish what it started and take nothing
// new, so a search that ends early does not pay for the rest.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "codegen/variant.hpp"
#include "gpu/device_limits.hpp"
#include "tune/compile_all.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::tune {

class CompileQueue {
 public:
  // `order`: indices into `variants`, the pool's order (indices left out are compiled only when
  // asked for). opts.jobs threads (0: all cores but two, which the GPU worker and the caller
  // need); opts.on_done is called from whichever thread compiled.
  CompileQueue(std::vector<codegen::Variant> variants, std::vector<size_t> order, gpu::DeviceLimits limits,
               CompileAllOptions opts);
  ~CompileQueue();
  CompileQueue(const CompileQueue&) = delete;
  CompileQueue& operator=(const CompileQueue&) = delete;

  [[nodiscard]] size_t size() const { return variants_.size(); }
  [[nodiscard]] size_t threads() const { return pool_.size(); }
  // Variant i's result, waiting for or doing its compile. The reference stays valid.
  const protocol::VariantResult& get(size_t i);
  // Whether variant i's result is in (get() would not wait).
  [[nodiscard]] bool done(size_t i);
  // The pool takes these (still queued) first, in this order, then its own order: the guided
  // search names what it will most likely ask for next (search/guided.cpp). Replaces the last call's.
  void prefer(std::vector<size_t> first);
  // The pool takes no new variant; get() still compiles what it is asked for.
  void stop();

 private:
  enum class State { queued, running, done };
  void work();
  // Compiles variant i (marked running by the caller) without the lock, then files it.
  void compile_and_file(size_t i);

  const std::vector<codegen::Variant> variants_;
  const std::vector<size_t> order_;
  const gpu::DeviceLimits limits_;
  const CompileAllOptions opts_;
  std::mutex mutex_;
  std::condition_variable landed_;
  std::vector<State> state_;
  std::vector<protocol::VariantResult> results_;
  size_t next_ = 0;  // into order_
  std::vector<size_t> preferred_;
  bool stopped_ = false;
  std::vector<std::jthread> pool_;  // last: joined first on destruction
};

}  // namespace fusetune::tune
