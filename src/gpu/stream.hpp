#pragma once
// One CUDA stream. Blocking (CU_STREAM_DEFAULT) by default: work on the legacy NULL stream
// (DeviceBuffer's default for copies and fills, cuDNN without a stream set) is then ordered
// with ours, so a result copied back is never read before the kernel that wrote it is done.
// Nothing is lost for timing: no NULL-stream work runs inside a timed region.
#include <cuda.h>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class Stream {
 public:
  explicit Stream(unsigned flags = CU_STREAM_DEFAULT);

  [[nodiscard]] CUstream get() const noexcept { return stream_.get(); }
  void synchronize() const;
  // True when all work queued so far has finished (a watchdog polls this to detect hangs).
  [[nodiscard]] bool query() const;

 private:
  struct Destroy {
    void operator()(CUstream stream) const noexcept;
  };
  UniqueHandle<CUstream, Destroy> stream_;  // move-only, destroyed once
};

}  // namespace fusetune::gpu
