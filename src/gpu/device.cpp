#include "gpu/device.hpp"

#include <array>

#include <fmt/format.h>

#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::gpu {
namespace {

int attribute(CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  FT_CU_CALL(driver().cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

DeviceLimits read_limits(CUdevice dev) {
  DeviceLimits l;
  l.cc_major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  l.cc_minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  l.sm_count = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l.warp_size = attribute(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  l.max_threads_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l.max_threads_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  l.max_blocks_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  l.regs_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  l.regs_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  l.smem_per_block = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  l.smem_per_block_optin = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  l.smem_per_sm = attribute(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  l.l2_bytes = attribute(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  return l;
}

}  // namespace

int device_count() {
  int count = 0;
  FT_CU_CALL(driver().cuDeviceGetCount(&count));
  return count;
}

DeviceInfo query_device(int ordinal) {
  const DriverApi& cu = driver();
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw InputError(fmt::format("no GPU with index {} (this machine has {} GPU{}: 0..{})", ordinal, count,
                                 count == 1 ? "" : "s", count - 1));
  }
  CUdevice dev = 0;
  FT_CU_CALL(cu.cuDeviceGet(&dev, ordinal));

  DeviceInfo info;
  info.ordinal = ordinal;
  std::array<char, 256> buf{};
  FT_CU_CALL(cu.cuDeviceGetName(buf.data(), static_cast<int>(buf.size()), dev));
  info.name = buf.data();
  buf.fill('\0');
  FT_CU_CALL(cu.cuDeviceGetPCIBusId(buf.data(), static_cast<int>(buf.size()), dev));
  info.pci_bus_id = buf.data();
  size_t total = 0;
  FT_CU_CALL(cu.cuDeviceTotalMem(&total, dev));
  info.total_mem = static_cast<int64_t>(total);
  FT_CU_CALL(cu.cuDriverGetVersion(&info.driver_version));
  info.clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.mem_clock_khz = attribute(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.bus_width = attribute(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);

  info.limits = read_limits(dev);
  info.limits.name = info.name;
  info.limits.global_mem_bytes = info.total_mem;
  return info;
}

std::string driver_version_string() {
  int v = 0;
  FT_CU_CALL(driver().cuDriverGetVersion(&v));
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

MemoryInfo device_memory() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  FT_CU_CALL(driver().cuMemGetInfo(&free_bytes, &total_bytes));
  return {static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes)};
}

}  // namespace fusetune::gpu
