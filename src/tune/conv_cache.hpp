#pragma once
// cuDNN's convolution for each layout a plan asks for, chosen once per worker: of the algorithms
// cuDNN's search ranks first that also pass the math mode's verification rule on the first
// input draw (up to four), the fastest as timed here (the same rule every candidate is held to: an algorithm whose result would
// fail it cannot stand under a baseline or a design). A worker started after a fault takes the
// choices of the one before instead of searching again.
#include <cuda.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "gpu/cudnn_conv.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device_buffer.hpp"
#include "reference/gpu_reference.hpp"
#include "spec/problem.hpp"
#include "tune/buffer_pool.hpp"
#include "tune/input_draws.hpp"
#include "tune/protocol.hpp"

namespace fusetune::tune {

class ConvAlgoCache {
 public:
  // l2_scrub_bytes: scrubbed before each timing of a candidate (0: the working set exceeds the L2).
  ConvAlgoCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, InputDraws& draws,
                BufferPool& pool, reference::GpuReference& ref, CUstream s, size_t l2_scrub_bytes);

  // Choices made earlier (by a worker that was replaced): used as they are.
  void seed(const ConvChoices& choices) { choices_ = choices; }

  // The chosen convolution for `layout`, searching and verifying on first use. Throws Error
  // when no algorithm passes.
  gpu::CudnnConv& conv(spec::Layout layout);
  [[nodiscard]] const gpu::DeviceBuffer& workspace() const { return workspace_; }

  [[nodiscard]] const ConvChoices& choices() const { return choices_; }
  // Algorithms cuDNN ranked faster than the chosen one that failed verification, one line each.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  static constexpr size_t kTimedCandidates = 4;
  gpu::ConvAlgoChoice fastest(gpu::CudnnConv& conv, const std::vector<gpu::ConvAlgoChoice>& candidates, CUdeviceptr x,
                              CUdeviceptr w, CUdeviceptr y);

  gpu::CudnnHandle& handle_;
  spec::Problem problem_;
  MathMode math_;
  InputDraws& draws_;
  BufferPool& pool_;
  reference::GpuReference& ref_;
  CUstream stream_;
  size_t l2_scrub_bytes_;
  std::map<int, std::unique_ptr<gpu::CudnnConv>> convs_;  // by layout
  ConvChoices choices_;
  std::vector<std::string> notes_;
  gpu::DeviceBuffer workspace_;
};

}  // namespace fusetune::tune
