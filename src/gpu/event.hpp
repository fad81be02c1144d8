#pragma once
// One CUDA event, for timing regions on a stream (PRODUCT.md: CUDA events around the region).
#include <cuda.h>

namespace fusetune::gpu {

class Event {
 public:
  // CU_EVENT_DEFAULT records timestamps; pass CU_EVENT_DISABLE_TIMING for pure sync points.
  explicit Event(unsigned flags = CU_EVENT_DEFAULT);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  [[nodiscard]] CUevent get() const noexcept { return event_; }
  void record(CUstream stream) const;
  void synchronize() const;
  // True when the work before the record has finished.
  [[nodiscard]] bool query() const;

  // Milliseconds between two recorded events (resolution about 0.5 us); waits for `end`.
  static float elapsed_ms(const Event& start, const Event& end);

 private:
  void destroy() noexcept;
  CUevent event_ = nullptr;
};

}  // namespace fusetune::gpu
