#pragma once
// One CUDA event, for timing regions on a stream (PRODUCT.md: CUDA events around the region).
#include <cuda.h>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class Event {
 public:
  // CU_EVENT_DEFAULT records timestamps; pass CU_EVENT_DISABLE_TIMING for pure sync points.
  explicit Event(unsigned flags = CU_EVENT_DEFAULT);

  [[nodiscard]] CUevent get() const noexcept { return event_.get(); }
  void record(CUstream stream) const;
  void synchronize() const;
  // True when the work before the record has finished.
  [[nodiscard]] bool query() const;

  // Milliseconds between two recorded events (resolution about 0.5 us); waits for `end`.
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  struct Destroy {
    void operator()(CUevent event) const noexcept;
  };
  UniqueHandle<CUevent, Destroy> event_;  // move-only, destroyed once
};

}  // namespace fusetune::gpu
