#include "gpu/context.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

Context::Context(int ordinal) : ordinal_(ordinal) {
  const DriverApi& cu = driver();
  CUdevice device = 0;
  FT_CU_CALL(cu.cuDeviceGet(&device, ordinal));
  CUcontext ctx = nullptr;
  FT_CU_CALL(cu.cuDevicePrimaryCtxRetain(&ctx, device));
  ctx_ = UniqueHandle<CUcontext, Release>(ctx, Release{device});  // released if make_current throws
  make_current();
}

void Context::Release::operator()(CUcontext) const noexcept {
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuDevicePrimaryCtxRelease(device));
}

void Context::make_current() const { FT_CU_CALL(driver().cuCtxSetCurrent(get())); }

void Context::synchronize() const {
  make_current();
  FT_CU_CALL(driver().cuCtxSynchronize());
}

}  // namespace fusetune::gpu
