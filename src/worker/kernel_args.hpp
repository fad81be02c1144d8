#pragma once
// The parameter array cuLaunchKernel reads for one kernel step: one pointer per argument, in the
// kernel's parameter order, each to that argument's value. A buffer argument points to its
// device pointer, a null argument to a zero CUdeviceptr, a by-value struct (the stage kernels'
// geometry) to its bytes in the step itself. Pure (no GPU), so the layout is tested GPU-free
// (tests/kernel_args_test.cpp); plan_runner.cpp only launches it.
#include <cuda.h>

#include <optional>
#include <span>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::worker {

class KernelLaunchArgs {
 public:
  // `buffers`: where each buffer of the plan lives (Binding::buffers). `redirect_output`: where
  // a written argument naming `output` points instead (verification running an in-place
  // epilogue out of place). The step must outlive the array: by-value arguments point into it.
  KernelLaunchArgs(const codegen::KernelStep& step, std::span<const CUdeviceptr> buffers, codegen::BufferRef output,
                   std::optional<CUdeviceptr> redirect_output);
  // The pointers point into this object's own vectors: a copy would point into the original.
  // A move keeps them valid (a moved vector keeps its storage).
  KernelLaunchArgs(const KernelLaunchArgs&) = delete;
  KernelLaunchArgs& operator=(const KernelLaunchArgs&) = delete;
  KernelLaunchArgs(KernelLaunchArgs&&) = default;
  KernelLaunchArgs& operator=(KernelLaunchArgs&&) = default;

  // cuLaunchKernel's kernelParams.
  [[nodiscard]] void** params() { return params_.data(); }
  [[nodiscard]] size_t size() const { return params_.size(); }
  // What argument i points to, for tests and messages.
  [[nodiscard]] const void* target(size_t i) const { return params_.at(i); }

 private:
  std::vector<CUdeviceptr> pointers_;  // per argument: the buffer's pointer, 0 for null (unused for structs)
  std::vector<void*> params_;
};

}  // namespace fusetune::worker
