#include "gpu/context.hpp"

#include <utility>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Context::Context(int ordinal) : ordinal_(ordinal) {
  const DriverApi& cu = driver();
  FT_CU_CALL(cu.cuDeviceGet(&device_, ordinal));
  FT_CU_CALL(cu.cuDevicePrimaryCtxRetain(&ctx_, device_));
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

Context::~Context() { release(); }

Context::Context(Context&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), device_(other.device_), ordinal_(other.ordinal_) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    release();
    ctx_ = std::exchange(other.ctx_, nullptr);
    device_ = other.device_;
    ordinal_ = other.ordinal_;
  }
  return *this;
}

void Context::release() noexcept {
  if (ctx_ == nullptr) return;
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuDevicePrimaryCtxRelease(device_));
  ctx_ = nullptr;
}

void Context::make_current() const { FT_CU_CALL(driver().cuCtxSetCurrent(ctx_)); }

void Context::synchronize() const {
  make_current();
  FT_CU_CALL(driver().cuCtxSynchronize());
}

}  // namespace fusetune::gpu
