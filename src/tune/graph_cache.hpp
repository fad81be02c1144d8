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

namespace fusetune::tune {

class GraphCache {
 public:
  GraphCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, BufferPool& pool, CUstream s)
      : handle_(handle), problem_(problem), math_(math), pool_(pool), stream_(s) {}

  // The graph of a plan's fused step, or of the conv alone in `layout` (no bias, no ops).
  [[nodiscard]] gpu::GraphDesc desc(const codegen::GraphStep& step) const;
  [[nodiscard]] gpu::GraphDesc conv_alone(spec::Layout layout) const;

  // Every configuration cuDNN offers for the graph (the first `most` when > 0), each built or
  // with its reason. Throws gpu::GraphRefused when cuDNN refuses the graph itself.
  std::vector<gpu::GraphEngine> engines(const gpu::GraphDesc& d, size_t most = 0, bool build = true);

  // Enqueues the graph with configuration `key`, building its plan first if needed.
  // Throws gpu::GraphRefused when cuDNN refuses the configuration.
  void run(const gpu::GraphDesc& d, const codegen::EngineKey& key, const gpu::GraphBuffers& buffers);
  // The same for a configuration known by cuDNN's name only (gpu::GraphEngine::by_name_only).
  void run_named(const gpu::GraphDesc& d, const std::string& name, const gpu::GraphBuffers& buffers);

  // cuDNN's name of a configuration ("eng7_k24=29"), for result tables.
  [[nodiscard]] std::string name(const gpu::GraphDesc& d, const codegen::EngineKey& key);

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
};

}  // namespace fusetune::tune
