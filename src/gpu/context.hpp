#pragma once
// The device's PRIMARY context, retained and made current on the constructing thread.
// Primary, not cuCtxCreate: cuDNN and anything else built on the CUDA runtime bind to the
// primary context, so kernels, buffers and cuDNN calls then share one address space.
//
// Everything allocated or loaded under it (Module, DeviceBuffer, Stream, Event) must be
// destroyed first: declare the Context before them. Releasing the last reference destroys
// the context and everything in it.
#include <cuda.h>

namespace fusetune::gpu {

class Context {
 public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  [[nodiscard]] CUcontext get() const noexcept { return ctx_; }
  [[nodiscard]] CUdevice device() const noexcept { return device_; }
  [[nodiscard]] int ordinal() const noexcept { return ordinal_; }

  // A context is current per thread: call this on each other thread that uses it.
  void make_current() const;
  // Waits for all work in the context; a kernel fault surfaces here as a CudaError.
  void synchronize() const;

 private:
  void release() noexcept;
  CUcontext ctx_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = -1;
};

}  // namespace fusetune::gpu
