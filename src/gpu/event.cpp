#include "gpu/event.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Event::Event(unsigned flags) {
  CUevent event = nullptr;
  FT_CU_CALL(driver().cuEventCreate(&event, flags));
  event_.reset(event);
}

void Event::Destroy::operator()(CUevent event) const noexcept {
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuEventDestroy(event));
}

void Event::record(CUstream stream) const { FT_CU_CALL(driver().cuEventRecord(get(), stream)); }

void Event::synchronize() const { FT_CU_CALL(driver().cuEventSynchronize(get())); }

bool Event::query() const {
  const CUresult r = driver().cuEventQuery(get());
  if (r == CUDA_ERROR_NOT_READY) return false;
  FT_CU_CALL(r);
  return true;
}

float Event::elapsed_ms(const Event& start, const Event& end) {
  end.synchronize();
  float ms = 0.0f;
  FT_CU_CALL(driver().cuEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace fusetune::gpu
