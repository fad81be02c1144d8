#pragma once
// cuDNN's graph API (cudnn-frontend) for the main operator of every conv kind of spec v2:
// conv2d and conv3d as conv_fprop, conv_transpose2d and conv_transpose3d as conv_dgrad of the
// forward conv they are the gradient of (worker/conv_nd_shape.hpp says why that mapping is
// exact), groups, dilation and per-dim stride/padding, output padding, and the bias as a
// pointwise add of a [1, K, 1, 1(, 1)] tensor inside the same graph. fp32 tensors, all three in
// one layout (nchw: NCHW/NCDHW with PyTorch's filter layout; nhwc: channels-last, the filter
// too), like the conv-alone graph of worker/cudnn_graph.hpp.
//
// The unfused and floor candidates of v2 problems run it as their main-operator step. The
// engine configurations are listed, keyed and built as CudnnGraph's are (the same GraphEngine
// and EngineKey, so a stored choice builds again without the heuristics).
//
// In worker/, not gpu/: it builds on the frontend include path and cudart that only the worker
// layer has (CMakeLists.txt), and on GraphEngine/GraphRefused of worker/cudnn_graph.hpp.
// Only its .cpp includes cudnn_frontend.h; it needs a GPU (the constructor's input checks do
// not: an unsupported conv is refused before cuDNN is called).
#include <cudnn.h>
#include <cuda.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "common/math_mode.hpp"
#include "spec/problem.hpp"
#include "worker/cudnn_graph.hpp"

namespace fusetune::worker {

struct ConvNdDesc {
  spec::MainKind kind = spec::MainKind::conv3d;  // one of the four conv kinds
  spec::Conv conv;
  spec::Layout layout = spec::Layout::nchw;  // x, w and y: nchw (channels first) or nhwc (last)
  bool bias = false;                         // y += bias[k], in the graph
  MathMode math = MathMode::tf32;            // fp32: engines with the TENSOR_CORE note left out
};

// Where the graph's tensors live for one run (bias: K floats, read only when desc.bias).
struct ConvNdBuffers {
  CUdeviceptr x = 0, w = 0, bias = 0, y = 0;
};

class ConvNdGraph {
 public:
  // Builds and checks the operation graph. Throws GraphRefused when cuDNN refuses it or the conv
  // cannot be mapped (conv_nd_unsupported's reason), before any cuDNN call in the latter case.
  ConvNdGraph(cudnnHandle_t handle, const ConvNdDesc& desc);
  ~ConvNdGraph();
  ConvNdGraph(const ConvNdGraph&) = delete;
  ConvNdGraph& operator=(const ConvNdGraph&) = delete;

  // As CudnnGraph: every configuration of heuristics A, B and the fallback list, deduplicated,
  // each built or with cuDNN's reason; the first `most` when most > 0; build = false lists them.
  // Throws GraphRefused when cuDNN offers none.
  std::vector<GraphEngine> engines(size_t most = 0, bool build = true);
  // Builds the plan of `key` (a stored choice needs no heuristics); returns its workspace bytes.
  int64_t prepare(const EngineKey& key);
  // Runs `key` on the handle's stream (cudnnSetStream; gpu::CudnnHandle::set_stream); async.
  void execute(const EngineKey& key, const ConvNdBuffers& buffers, CUdeviceptr workspace, size_t workspace_bytes);
  // By cuDNN's name, for configurations with `by_name_only`.
  int64_t prepare_named(const std::string& name);
  void execute_named(const std::string& name, const ConvNdBuffers& buffers, CUdeviceptr workspace,
                     size_t workspace_bytes);

  [[nodiscard]] std::string name(const EngineKey& key) const;
  [[nodiscard]] bool built(const EngineKey& key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusetune::worker
