#pragma once
// cuDNN graph plans built ahead, on threads of the worker's own, while its main thread verifies
// and times other variants. A runtime-fused configuration (cudnn-fused) compiles its kernels
// when its plan is built: 0.5 s each for kernelbench-31 on the H200, three of them run one after
// another in a guided tune's measure phase (call 76's trace). The tuner names the configurations
// among its search's next predicted picks (protocol::RunRequest::prebuild); they are built here while the
// GPU is busy, and GraphCache::run() takes the built plan instead of building it on the timed
// path's thread.
//
// Each plan is built on a cuDNN handle of its own, made for it on the building thread: cuDNN is
// thread-safe across handles, never for one handle used by two threads at once. Once built, the
// plan and its handle belong to whoever takes them; the building thread never touches them again.
// kThreads threads build at once: with one, the second of two plans the search runs back to back
// waited 0.66 s for the first to finish (call 80, a re-tune whose kernels were all compiled).
#include <cuda.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "worker/cudnn_graph.hpp"
#include "gpu/cudnn_handle.hpp"

namespace fusetune::worker {

class PlanPrebuilder {
 public:
  // One built configuration: the handle it was built on (run it on that handle), its graph with
  // the plan built, or what building it threw.
  struct Built {
    std::optional<gpu::CudnnHandle> handle;  // destroyed after the graph that uses it
    std::unique_ptr<worker::CudnnGraph> graph;
    std::exception_ptr error;
    double build_s = 0;  // how long building it took
  };

  static constexpr int kThreads = 3;

  // ctx: the worker's context, made current on the building threads; plans built here run on
  // `stream` (each handle's stream is set to it).
  PlanPrebuilder(CUcontext ctx, CUstream stream) : ctx_(ctx), stream_(stream) {}
  ~PlanPrebuilder();  // waits for the builds under way; the queued ones are dropped
  PlanPrebuilder(const PlanPrebuilder&) = delete;
  PlanPrebuilder& operator=(const PlanPrebuilder&) = delete;

  // Queues (d, key) unless it was asked for already. The threads start on the first ask.
  void ask(const worker::GraphDesc& d, const codegen::EngineKey& key);

  // The plan for (d, key): nullptr when it was never asked for, or was still queued (dropped
  // from the queue: the caller builds it now rather than wait behind others); waits while it is
  // being built. `waited_s`: how long this call waited.
  std::unique_ptr<Built> take(const worker::GraphDesc& d, const codegen::EngineKey& key, double* waited_s = nullptr);

  // Waits until everything asked for is built (tests: take() then finds each one built).
  void drain();
  // Drops what is queued and waits for the builds under way: the re-timing rounds, whose figures
  // are the reported ones, then run with no build beside them (module loads, NVRTC and handle
  // creation on other threads could stall this thread's enqueues). A plan dropped here is built
  // where it first runs, as without this class.
  void settle();

 private:
  using Job = std::pair<worker::GraphDesc, codegen::EngineKey>;
  void loop();
  std::unique_ptr<Built> build(const Job& job) const;

  CUcontext ctx_;
  CUstream stream_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queued_;
  std::vector<Job> building_;
  std::map<Job, std::unique_ptr<Built>> built_;
  std::map<Job, bool> asked_;  // every job ever asked for: a second ask is ignored
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: started after everything they read exists
};

}  // namespace fusetune::worker
