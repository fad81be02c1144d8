#include "gpu/device_buffer.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

DeviceBuffer::DeviceBuffer(size_t bytes) {
  if (bytes == 0) return;  // cuMemAlloc rejects 0; an empty buffer is still useful
  CUdeviceptr ptr = 0;
  const CUresult r = driver().cuMemAlloc(&ptr, bytes);
  if (r != CUDA_SUCCESS) {
    throw CudaError(r, fmt::format("allocating {} bytes ({:.2f} GiB) of device memory failed: {}", bytes,
                                   static_cast<double>(bytes) / double(1ull << 30), cu_result_text(r)));
  }
  memory_.reset({ptr, bytes});
}

void DeviceBuffer::Free::operator()(const Allocation& memory) const noexcept {
  if (memory.ptr == 0) return;
  if (const DriverApi* cu = driver_if_loaded()) FT_CU_CALL_NOEXCEPT(cu->cuMemFree(memory.ptr));
}

void DeviceBuffer::check_range(size_t offset, size_t bytes, const char* what) const {
  if (offset > size() || bytes > size() - offset) {
    throw Error(ExitCode::failure, fmt::format("DeviceBuffer::{}: bytes [{}, {}) outside a buffer of {} bytes",
                                               what, offset, offset + bytes, size()));
  }
}

void DeviceBuffer::check_multiple(size_t unit) const {
  if (size() % unit != 0) {
    throw Error(ExitCode::failure, fmt::format("DeviceBuffer of {} bytes is not a whole number of {}-byte elements",
                                               size(), unit));
  }
}

// Host copies go through the Async calls plus a stream sync: the plain cuMemcpyHtoD may
// return before a pageable source has reached the device.
void DeviceBuffer::copy_from_host(const void* src, size_t bytes, size_t offset, CUstream stream) {
  check_range(offset, bytes, "copy_from_host");
  if (bytes == 0) return;
  const DriverApi& cu = driver();
  FT_CU_CALL(cu.cuMemcpyHtoDAsync(ptr() + offset, src, bytes, stream));
  FT_CU_CALL(cu.cuStreamSynchronize(stream));
}

void DeviceBuffer::copy_to_host(void* dst, size_t bytes, size_t offset, CUstream stream) const {
  check_range(offset, bytes, "copy_to_host");
  if (bytes == 0) return;
  const DriverApi& cu = driver();
  FT_CU_CALL(cu.cuMemcpyDtoHAsync(dst, ptr() + offset, bytes, stream));
  FT_CU_CALL(cu.cuStreamSynchronize(stream));
}

void DeviceBuffer::copy_from(const DeviceBuffer& src, size_t bytes, CUstream stream) {
  check_range(0, bytes, "copy_from");
  src.check_range(0, bytes, "copy_from (source)");
  if (bytes == 0) return;
  FT_CU_CALL(driver().cuMemcpyDtoDAsync(ptr(), src.ptr(), bytes, stream));
}

void DeviceBuffer::fill_u32(uint32_t word, CUstream stream) {
  check_multiple(4);
  if (size() == 0) return;
  FT_CU_CALL(driver().cuMemsetD32Async(ptr(), word, size() / 4, stream));
}

void DeviceBuffer::fill_u8(uint8_t byte, CUstream stream) {
  if (size() == 0) return;
  FT_CU_CALL(driver().cuMemsetD8Async(ptr(), byte, size(), stream));
}

}  // namespace fusetune::gpu
