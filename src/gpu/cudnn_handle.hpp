#pragma once
// Owns one cudnnHandle_t (STYLE.md 5): move-only, destroyed exactly once.
// Creating it needs a GPU: cuDNN runs on the CUDA runtime, which binds to the current
// device's PRIMARY context, so the caller makes that context current first.
#include <cuda.h>
#include <cudnn.h>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class CudnnHandle {
 public:
  CudnnHandle();  // throws fusetune::Error when cudnnCreate fails (no GPU, no context)

  // All work issued through this handle goes to `stream` (nullptr: the legacy default stream).
  // CUstream and cudaStream_t are the same type (struct CUstream_st*), so no conversion.
  void set_stream(CUstream stream);

  [[nodiscard]] cudnnHandle_t get() const noexcept { return handle_.get(); }

 private:
  struct Deleter {
    void operator()(cudnnHandle_t handle) const noexcept;
  };
  UniqueHandle<cudnnHandle_t, Deleter> handle_;
};

}  // namespace fusetune::gpu
