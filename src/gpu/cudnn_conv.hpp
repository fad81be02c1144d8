#pragma once
// One cuDNN forward convolution (fp32 data, fp32 accumulation) for one shape, layout and math
// mode: searches cuDNN's algorithms on the caller's buffers, keeps the best one the math mode
// allows, and runs it, with the conv bias added by cudnnAddTensor (what PyTorch eager runs for a
// Conv2d with bias, and valid for every algorithm, unlike cudnnConvolutionBiasActivationForward
// whose identity activation only supports IMPLICIT_PRECOMP_GEMM).
//
// Needs a GPU: the caller makes the device's primary context current (cuDNN runs on the CUDA
// runtime, which binds to it) and keeps the CudnnHandle alive longer than this object.
#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cudnn_algo.hpp"
#include "gpu/cudnn_conv_descs.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/cudnn_version.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

class CudnnConv {
 public:
  // Workspace a single algorithm may ask for before max_workspace_bytes() stops sizing for it
  // (FFT variants can ask for gigabytes on large shapes).
  static constexpr size_t kDefaultWorkspaceCap = size_t{2} << 30;

  // layout: the memory layout of x and y (nchw|nhwc) and of the filters (KCRS|KRSC); the
  // spec's own in/out layouts are ignored. Throws fusetune::InputError for an impossible shape.
  CudnnConv(CudnnHandle& handle, const spec::Conv& conv, spec::Layout layout, MathMode mode);

  CudnnConv(CudnnConv&&) noexcept = default;
  CudnnConv& operator=(CudnnConv&&) noexcept = default;
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;
  ~CudnnConv() = default;

  // The largest workspace any algorithm needs under this math mode, each capped at `cap`;
  // algorithms that do not support the shape are skipped. Allocate this much for find().
  [[nodiscard]] size_t max_workspace_bytes(size_t cap = kDefaultWorkspaceCap);

  // Times every algorithm on these buffers (cudnnFindConvolutionForwardAlgorithmEx; blocking,
  // and it overwrites y), returns the usable results for the math mode fastest first, and
  // chooses the first. An algorithm needing more than workspace_bytes is left out by cuDNN.
  // Throws fusetune::Error when none is usable.
  std::vector<ConvAlgoChoice> find(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr workspace,
                                   size_t workspace_bytes);

  // Chooses a result without searching (e.g. one stored in the database). Throws when its math
  // type is not allowed for the mode. The workspace it needs is re-queried from cuDNN.
  void choose(const ConvAlgoChoice& choice);

  // y = conv(x, w) (+ bias[k], broadcast, when bias_or_0 != 0) with the chosen algorithm, on the
  // handle's stream; asynchronous. Throws when nothing is chosen or the workspace is too small.
  void forward(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr workspace, size_t workspace_bytes,
               CUdeviceptr bias_or_0);

  // y += bias[k], broadcast (cudnnAddTensor): the bias of a conv run another way.
  void add_bias(CUdeviceptr y, CUdeviceptr bias);

  [[nodiscard]] const std::optional<ConvAlgoChoice>& chosen() const noexcept { return chosen_; }
  // Workspace forward() needs for the chosen algorithm (0 when nothing is chosen).
  [[nodiscard]] size_t required_workspace_bytes() const noexcept { return chosen_ ? chosen_->workspace : 0; }
  // "IMPLICIT_PRECOMP_GEMM (tf32)"; "none" before find() or choose().
  [[nodiscard]] std::string chosen_name() const;
  // Everything the last find() returned, unfiltered and in cuDNN's order, failures included:
  // for reports that show why an algorithm is missing.
  [[nodiscard]] const std::vector<ConvAlgoChoice>& all_results() const noexcept { return all_results_; }

  [[nodiscard]] MathMode math_mode() const noexcept { return mode_; }
  [[nodiscard]] spec::Layout layout() const noexcept { return layout_; }
  [[nodiscard]] const spec::Conv& conv() const noexcept { return conv_; }

 private:
  [[nodiscard]] std::optional<size_t> workspace_for(int algo, cudnnMathType_t math_type);

  // The raw handle, not the owner's address: moving the CudnnHandle must not strand us.
  cudnnHandle_t handle_;  // not owned
  spec::Conv conv_;
  spec::Layout layout_;
  MathMode mode_;
  CudnnConvDescs descs_;
  std::optional<ConvAlgoChoice> chosen_;
  std::vector<ConvAlgoChoice> all_results_;
};

}  // namespace fusetune::gpu
