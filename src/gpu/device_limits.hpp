#pragma once
// What the search spaces need to know about a GPU. Filled from the device when there is one
// (gpu/device.cpp), or from a per-architecture table for GPU-free `compile --arch`.
#include <cstdint>
#include <optional>
#include <string>

namespace fusetune::gpu {

struct DeviceLimits {
  std::string name = "generic";
  int cc_major = 9;
  int cc_minor = 0;
  int sm_count = 132;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int regs_per_block = 65536;
  int regs_per_sm = 65536;
  int64_t smem_per_block = 48 * 1024;
  int64_t smem_per_block_optin = 227 * 1024;
  int64_t smem_per_sm = 228 * 1024;
  int64_t l2_bytes = 60 * 1024 * 1024;
  int64_t global_mem_bytes = 0;

  [[nodiscard]] int arch() const { return cc_major * 10 + cc_minor; }
  [[nodiscard]] std::string arch_flag() const { return "sm_" + std::to_string(arch()); }
};

// Limits of a known architecture ("sm_80", "sm_90", ...) for GPU-free work; nullopt when unknown.
std::optional<DeviceLimits> limits_for_arch(const std::string& arch);

}  // namespace fusetune::gpu
