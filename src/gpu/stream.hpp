#pragma once
// One CUDA stream. Blocking (CU_STREAM_DEFAULT) by default: work on the legacy NULL stream
// (DeviceBuffer's default for copies and fills, cuDNN without a stream set) is then ordered
// with ours, so a result copied back is never read before the kernel that wrote it is done.
// Nothing is lost for timing: no NULL-stream work runs inside a timed region.
#include <cuda.h>

namespace fusetune::gpu {

class Stream {
 public:
  explicit Stream(unsigned flags = CU_STREAM_DEFAULT);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[nodiscard]] CUstream get() const noexcept { return stream_; }
  void synchronize() const;
  // True when all work queued so far has finished (a watchdog polls this to detect hangs).
  [[nodiscard]] bool query() const;

 private:
  void destroy() noexcept;
  CUstream stream_ = nullptr;
};

}  // namespace fusetune::gpu
