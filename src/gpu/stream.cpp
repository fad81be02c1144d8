#include "gpu/stream.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Stream::Stream(unsigned flags) {
  CUstream stream = nullptr;
  FT_CU_CALL(driver().cuStreamCreate(&stream, flags));
  stream_.reset(stream);
}

void Stream::Destroy::operator()(CUstream stream) const noexcept {
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuStreamDestroy(stream));
}

void Stream::synchronize() const { FT_CU_CALL(driver().cuStreamSynchronize(get())); }

bool Stream::query() const {
  const CUresult r = driver().cuStreamQuery(get());
  if (r == CUDA_ERROR_NOT_READY) return false;
  FT_CU_CALL(r);
  return true;
}

}  // namespace fusetune::gpu
