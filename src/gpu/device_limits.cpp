#include "gpu/device_limits.hpp"

namespace fusetune::gpu {

std::optional<DeviceLimits> limits_for_arch(const std::string& arch) {
  DeviceLimits l;
  l.name = "generic " + arch;
  if (arch == "sm_80") {
    l.cc_major = 8; l.cc_minor = 0; l.sm_count = 108;
    l.smem_per_block_optin = 163 * 1024; l.smem_per_sm = 164 * 1024; l.l2_bytes = 40LL << 20;
  } else if (arch == "sm_86" || arch == "sm_89") {
    l.cc_major = 8; l.cc_minor = arch == "sm_86" ? 6 : 9; l.sm_count = arch == "sm_86" ? 84 : 128;
    l.max_threads_per_sm = 1536; l.max_blocks_per_sm = arch == "sm_86" ? 16 : 24;
    l.smem_per_block_optin = 99 * 1024; l.smem_per_sm = 100 * 1024; l.l2_bytes = arch == "sm_86" ? 6LL << 20 : 72LL << 20;
  } else if (arch == "sm_90" || arch == "sm_90a") {
    l.cc_major = 9; l.cc_minor = 0; l.sm_count = 132;
  } else if (arch == "sm_100") {
    l.cc_major = 10; l.cc_minor = 0; l.sm_count = 148; l.l2_bytes = 126LL << 20;
  } else {
    return std::nullopt;
  }
  return l;
}

}  // namespace fusetune::gpu
