#pragma once
// The device's PRIMARY context, retained and made current on the constructing thread.
// Primary, not cuCtxCreate: cuDNN and anything else built on the CUDA runtime bind to the
// primary context, so kernels, buffers and cuDNN calls then share one address space.
//
// Everything allocated or loaded under it (Module, DeviceBuffer, Stream, Event) must be
// destroyed first: declare the Context before them. Releasing the last reference destroys
// the context and everything in it.
#include <cuda.h>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class Context {
 public:
  explicit Context(int ordinal = 0);

  [[nodiscard]] CUcontext get() const noexcept { return ctx_.get(); }
  [[nodiscard]] CUdevice device() const noexcept { return ctx_.deleter().device; }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }

  // A context is current per thread: call this on each other thread that uses it.
  void make_current() const;
  // Waits for all work in the context; a kernel fault surfaces here as a CudaError.
  void synchronize() const;

 private:
  // A primary context is released through its device, which the deleter therefore carries.
  struct Release {
    CUdevice device = 0;
    void operator()(CUcontext ctx) const noexcept;
  };
  UniqueHandle<CUcontext, Release> ctx_;  // move-only, released once
  int ordinal_ = -1;
};

}  // namespace fusetune::gpu
