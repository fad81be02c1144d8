#pragma once
// cuDNN graphs for the plan steps that ask for one (codegen::GraphStep), built once per worker:
// one gpu::CudnnGraph per graph (gpu::GraphDesc), holding every plan built so far, so
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
#include "gpu/cudnn_graph.hpp"
#include "gpu/cudnn_handle.hpp"
#include "spec/problem.hpp"
#include "tune/buffer_pool.hpp"
#include "tune/plan_prebuild.hpp"

namespace fusetune::tune {

class GraphCache {
 public:
  // ctx: the context plans built ahead are built in (prebuild()); nullptr builds none ahead.
  GraphCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, BufferPool& pool, CUstream s,
             CUcontext ctx = nullptr)
      : handle_(handle), problem_(problem), math_(math), pool_(pool), stream_(s) {
    if (ctx) ahead_ = std::make_unique<PlanPrebuilder>(ctx, s);
  }

  // The graph of a plan's fused step, or of the conv alone in `layout` (no bias, no ops).
  [[nodiscard]] gpu::GraphDesc desc(const codegen::GraphStep& step) const;
  [[nodiscard]] gpu::GraphDesc conv_alone(spec::Layout layout) const;

  // Every configuration cuDNN offers for the graph (the first `most` when > 0), each built or
  // with its reason. Throws gpu::GraphRefused when cuDNN refuses the graph itself.
  std::vector<gpu::GraphEngine> engines(const gpu::GraphDesc& d, size_t most = 0, bool build = true);

  // Starts building the plan of configuration `key` on another thread (PlanPrebuilder), for a
  // run() to come. A no-op without a context, or for a plan built or asked for already.
  void prebuild(const gpu::GraphDesc& d, const codegen::EngineKey& key);
  // No plan builds beside what follows (PlanPrebuilder::settle): before the re-timing rounds.
  void settle() {
    if (ahead_) ahead_->settle();
  }

  // Enqueues the graph with configuration `key`, building its plan first if needed (or taking
  // the one prebuild() built). Throws gpu::GraphRefused when cuDNN refuses the configuration.
  void run(const gpu::GraphDesc& d, const codegen::EngineKey& key, const gpu::GraphBuffers& buffers);
  // The same for a configuration known by cuDNN's name only (gpu::GraphEngine::by_name_only).
  void run_named(const gpu::GraphDesc& d, const std::string& name, const gpu::GraphBuffers& buffers);

  // cuDNN's name of a configuration ("eng7_k24=29"), for result tables.
  [[nodiscard]] std::string name(const gpu::GraphDesc& d, const codegen::EngineKey& key);

  // One line per plan built ahead and taken since the last call ("cuDNN plan of ... built ahead
  // in 0.52 s; its first run waited 0.00 s for it"), for the run's notes.
  std::vector<std::string> take_notes() { return std::exchange(notes_, {}); }

 private:
  gpu::CudnnGraph& graph(const gpu::GraphDesc& d);
  // The pool's workspace of at least `bytes_needed` (and 256) bytes; its size in `bytes`.
  CUdeviceptr workspace(int64_t bytes_needed, size_t& bytes);

  gpu::CudnnHandle& handle_;
  spec::Problem problem_;
  MathMode math_;
  BufferPool& pool_;
  CUstream stream_;
  std::map<gpu::GraphDesc, std::unique_ptr<gpu::CudnnGraph>> graphs_;
  // Plans built ahead, each on its own handle, run as they are (by key within a graph).
  std::map<std::pair<gpu::GraphDesc, codegen::EngineKey>, std::unique_ptr<PlanPrebuilder::Built>> ahead_built_;
  std::vector<std::string> notes_;
  std::unique_ptr<PlanPrebuilder> ahead_;  // last: its thread stops first
};

}  // namespace fusetune::tune
