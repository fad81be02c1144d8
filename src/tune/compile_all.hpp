#pragma once
// Compiles every variant with NVRTC on a pool of threads and checks the result against the
// device's limits. Failures become statuses on the results; nothing here throws for a variant.
#include <filesystem>
#include <functional>
#include <vector>

#include "codegen/variant.hpp"
#include "gpu/device_limits.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::tune {

struct CompileAllOptions {
  std::string arch = "sm_90";
  bool strict_fp32 = false;
  unsigned jobs = 0;  // 0: all cores
  std::filesystem::path cache_dir;  // a compile cache (compile_cache.hpp); empty: compile everything
  std::function<void(const protocol::VariantResult&)> on_done;  // called from worker threads
};

// One variant: NVRTC (or the compile cache), then the device's limits. Never throws.
protocol::VariantResult compile_variant(const codegen::Variant& v, const gpu::DeviceLimits& limits,
                              const CompileAllOptions& opts);

std::vector<protocol::VariantResult> compile_all(const std::vector<codegen::Variant>& variants,
                                       const gpu::DeviceLimits& limits, const CompileAllOptions& opts);

// Why a compiled variant cannot launch on this device ("" when it fits).
std::string device_limit_violation(const codegen::Variant& v, const protocol::CompileFigures& c,
                                   const gpu::DeviceLimits& limits);

}  // namespace fusetune::tune
