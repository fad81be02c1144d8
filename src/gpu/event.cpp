#include "gpu/event.hpp"

#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Event::Event(unsigned flags) { FT_CU_CALL(driver().cuEventCreate(&event_, flags)); }

Event::~Event() { destroy(); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::destroy() noexcept {
  if (event_ == nullptr) return;
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuEventDestroy(event_));
  event_ = nullptr;
}

void Event::record(CUstream stream) const { FT_CU_CALL(driver().cuEventRecord(event_, stream)); }

void Event::synchronize() const { FT_CU_CALL(driver().cuEventSynchronize(event_)); }

bool Event::query() const {
  const CUresult r = driver().cuEventQuery(event_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  FT_CU_CALL(r);
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  float ms = 0.0f;
  FT_CU_CALL(driver().cuEventElapsedTime(&ms, start.event_, end.event_));
  return ms;
}

}  // namespace fusetune::gpu
