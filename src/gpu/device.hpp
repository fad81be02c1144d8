#pragma once
// What `fusetune devices` prints and the tuning database fingerprints: one GPU's identity,
// limits and clocks, read from the driver. No context is needed (cuDeviceGetAttribute).
#include <cstdint>
#include <string>

#include "gpu/device_limits.hpp"

namespace fusetune::gpu {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;        // "NVIDIA H200"
  std::string pci_bus_id;  // "0000:19:00.0": tells identical GPUs of one host apart
  DeviceLimits limits;     // limits.name == name, limits.global_mem_bytes == total_mem
  int64_t total_mem = 0;   // bytes
  int driver_version = 0;  // CUDA version the driver supports, e.g. 13000
  int clock_khz = 0;       // typical SM clock (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  int mem_clock_khz = 0;   // peak memory clock
  int bus_width = 0;       // memory bus width, bits

  // Theoretical DRAM bandwidth from the attributes: 2 transfers per clock x bus width.
  // The H200 gives 4814 GB/s (its datasheet's 4.8 TB/s); copies reach about 4.25 TB/s, so
  // report % of the measured copy bandwidth, not of this.
  [[nodiscard]] double peak_bandwidth_gbs() const {
    return 2.0 * mem_clock_khz * 1e3 * (bus_width / 8.0) / 1e9;
  }
};

// Number of visible GPUs; throws NoGpuError when there is no driver or no GPU.
int device_count();

// Throws NoGpuError without a driver, fusetune::InputError for an ordinal out of range.
DeviceInfo query_device(int ordinal);

// "13.0" from cuDriverGetVersion: part of the environment fingerprint.
std::string driver_version_string();

// Free and total device memory of the current context's device (needs a current Context).
struct MemoryInfo {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};
MemoryInfo device_memory();

}  // namespace fusetune::gpu
