#pragma once
// cuDNN graphs for the plan steps that ask for one (codegen::GraphStep), built once per worker:
// one worker::CudnnGraph per graph (worker::GraphDesc), holding every plan built so far, so
// the configurations listed and built in parallel by engines() cost nothing more when each is
// then run as a variant, and a stored configuration is built once however often it runs.
#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cudnn_engine.hpp"
#include "codegen/variant.hpp"
#include "common/math_mode.hpp"
#include "worker/cudnn_graph.hpp"
#include "gpu/cudnn_handle.hpp"
#include "spec/problem.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/plan_prebuild.hpp"

namespace fusetune::worker {

class GraphCache {
 public:
  // ctx: the context plans built ahead are built in (prebuild()); nullptr builds none ahead.
  GraphCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, BufferPool& pool, CUstream s,
             CUcontext ctx = nullptr)
      : handle_(handle), problem_(problem), math_(math), pool_(pool), stream_(s) {
    if (ctx) ahead_ = std::make_unique<PlanPrebuilder>(ctx, s);
  }

  // The graph of a plan's fused step, or of the conv alone in `layout` (no bias, no ops).
  [[nodiscard]] worker::GraphDesc desc(const codegen::GraphStep& step) const;
  [[nodiscard]] worker::GraphDesc conv_alone(spec::Layout layout) const;

  // Every configuration cuDNN offers for the graph (the first `most` when > 0), each built or
  // with its reason. Throws worker::GraphRefused when cuDNN refuses the graph itself.
  std::vector<worker::GraphEngine> engines(const worker::GraphDesc& d, size_t most = 0, bool build = true);

  // Starts building the plan of configuration `key` on another thread (PlanPrebuilder), for a
  // run() to come. A no-op without a context, or for a plan built or asked for already.
  void prebuild(const worker::GraphDesc& d, const codegen::EngineKey& key);
  // No plan builds beside what follows (PlanPrebuilder::settle): before the re-timing rounds.
  void settle() {
    if (ahead_) ahead_->settle();
  }

  // Enqueues the graph with configuration `key`, building its plan first if needed (or taking
  // the one prebuild() built). Throws worker::GraphRefused when cuDNN refuses the configuration.
  void run(const worker::GraphDesc& d, const codegen::EngineKey& key, const worker::GraphBuffers& buffers);
  // The same for a configuration known by cuDNN's name only (worker::GraphEngine::by_name_only).
  void run_named(const worker::GraphDesc& d, const std::string& name, const worker::GraphBuffers& buffers);

  // cuDNN's name of a configuration ("eng7_k24=29"), for result tables.
  [[nodiscard]] std::string name(const worker::GraphDesc& d, const codegen::EngineKey& key);

  // One line per plan built ahead and taken since the last call ("cuDNN plan of ... built ahead
  // in 0.52 s; its first run waited 0.00 s for it"), for the run's notes.
  std::vector<std::string> take_notes() { return std::exchange(notes_, {}); }

 private:
  worker::CudnnGraph& graph(const worker::GraphDesc& d);
  // The pool's workspace of at least `bytes_needed` (and 256) bytes; its size in `bytes`.
  CUdeviceptr workspace(int64_t bytes_needed, size_t& bytes);

  gpu::CudnnHandle& handle_;
  spec::Problem problem_;
  MathMode math_;
  BufferPool& pool_;
  CUstream stream_;
  std::map<worker::GraphDesc, std::unique_ptr<worker::CudnnGraph>> graphs_;
  // Plans built ahead, each on its own handle, run as they are (by key within a graph).
  std::map<std::pair<worker::GraphDesc, codegen::EngineKey>, std::unique_ptr<PlanPrebuilder::Built>> ahead_built_;
  std::vector<std::string> notes_;
  std::unique_ptr<PlanPrebuilder> ahead_;  // last: its thread stops first
};

}  // namespace fusetune::worker
