#include "gpu/stream.hpp"

#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Stream::Stream(unsigned flags) { FT_CU_CALL(driver().cuStreamCreate(&stream_, flags)); }

Stream::~Stream() { destroy(); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::destroy() noexcept {
  if (stream_ == nullptr) return;
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuStreamDestroy(stream_));
  stream_ = nullptr;
}

void Stream::synchronize() const { FT_CU_CALL(driver().cuStreamSynchronize(stream_)); }

bool Stream::query() const {
  const CUresult r = driver().cuStreamQuery(stream_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  FT_CU_CALL(r);
  return true;
}

}  // namespace fusetune::gpu
