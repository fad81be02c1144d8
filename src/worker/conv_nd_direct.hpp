#pragma once
// fusetune's own pieces of a version-2 conv step (kernel_templates/conv_nd_direct.cu), where
// cuDNN's graph API falls short (worker/main_op_steps.hpp): the bias added after cuDNN's conv
// alone (cuDNN refuses transposed convs with the bias in the graph), and the whole fp32 conv where
// cuDNN builds no configuration at all -- without it such a problem has no floor and no unfused
// candidate. One NVRTC compile per problem and worker, kept; channels-first tensors only (the
// graph's nhwc convs have no fallback: version-2 channels-last problems are refused before a
// worker starts, docs/commands.md).
#include <cuda.h>

#include <string>

#include "gpu/compiler.hpp"
#include "gpu/module.hpp"
#include "spec/problem.hpp"
#include "worker/conv_nd_graph.hpp"

namespace fusetune::worker {

// conv_nd_direct.cu with the problem's conv as #defines. GPU-free (tests compile it for every
// conv kind). Throws InputError when the main operator is not a conv.
[[nodiscard]] std::string render_conv_nd_direct_source(const spec::Problem& problem);
inline constexpr const char* kConvNdDirectKernel = "ft_conv_nd_direct";
inline constexpr const char* kConvNdAddBiasKernel = "ft_conv_nd_add_bias";

class ConvNdDirect {
 public:
  // Compiles for `arch` (sm_XX) and loads the kernel; throws fusetune::Error with NVRTC's log
  // when it does not compile. Needs a current context.
  ConvNdDirect(const spec::Problem& problem, const std::string& arch);

  // y = conv(x, w) (+ bias when buffers.bias is not 0), on `stream`; async.
  void run(const ConvNdBuffers& buffers, CUstream stream) const;
  // y += bias[k] over the conv's output (channels first), on `stream`; async.
  void add_bias(CUdeviceptr y, CUdeviceptr bias, CUstream stream) const;

 private:
  [[nodiscard]] gpu::Dim3 grid() const;  // enough blocks for one output a thread (grid-stride)

  int64_t outputs_;
  gpu::Module module_;
  CUfunction kernel_;
  CUfunction add_bias_;
};

}  // namespace fusetune::worker
