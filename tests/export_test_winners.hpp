#pragma once
// Winner records for the export tests, built GPU-free: variants generated for sm_90 limits,
// compiled with NVRTC (CUBIN and PTX filled in as the tuner stores them), with plausible
// environment and timing figures.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/compile_target.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "db/records.hpp"
#include "gpu/compiler.hpp"
#include "gpu/device_limits.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "spec_builders.hpp"

namespace fusetune::exporter::testing {

using spec_builders::preset;

inline std::vector<codegen::Variant> variants_of(const spec::Problem& problem) {
  codegen::GenerateOptions options;
  options.problem_text = spec::canonical(problem);
  return codegen::generate_variants(problem, *gpu::limits_for_arch("sm_90"), options);
}

// The first variant whose name starts with `prefix` ("epilogue.nchw", "epilogue.nhwc", "unfused").
inline codegen::Variant pick(const std::vector<codegen::Variant>& variants, const std::string& prefix) {
  const auto it = std::find_if(variants.begin(), variants.end(),
                               [&](const codegen::Variant& v) { return v.name.starts_with(prefix); });
  if (it == variants.end()) throw std::runtime_error("no variant named " + prefix + "*");
  return *it;
}

// A winner record for `v`, as the tuner stores it. compile: fill cubin/ptx with NVRTC.
inline db::WinnerRecord winner_for(const spec::Problem& problem, const codegen::Variant& v, bool compile = true,
                                   const std::string& math = "tf32") {
  db::WinnerRecord w;
  w.env.gpu_name = "NVIDIA H200";
  w.env.cc_major = 9;
  w.env.cc_minor = 0;
  w.env.sm_count = 132;
  w.env.mem_bytes = int64_t{143} << 30;
  w.env.driver = "13.0";
  w.env.cuda_runtime = "13.0";
  w.env.nvrtc = "13.0";
  w.env.cudnn = "9.19.0";
  w.env.templates_hash = "0123456789abcdef";
  w.problem_key = spec::problem_key(problem);
  w.canonical = spec::canonical(problem);
  w.math = math;
  w.candidate = std::string(codegen::candidate_name(v.candidate));
  w.variant_name = v.name;
  w.variant_json = codegen::to_json(v).dump();
  if (compile && !v.source.empty()) {
    gpu::CompileOptions o = codegen::compile_options(v, "sm_90", math == "fp32");  // sm_90a for fused-conv
    o.ptxas_verbose = false;
    const auto r = gpu::compile_cuda(v.source, v.name + ".cu", o);
    if (!r.ok()) throw std::runtime_error("NVRTC failed on " + v.name + ": " + r.log);
    w.cubin = r.cubin;
    w.ptx = r.ptx;
    w.compile_options = fmt::format("{}", fmt::join(r.options, " "));
  }
  w.time_median_ms = 1.678;
  w.time_spread = 0.004;
  w.unfused_median_ms = 4.618;
  w.cudnn_median_ms = 0.894;
  w.cudnn_algo = "IMPLICIT_PRECOMP_GEMM (tf32)";
  w.created_at = "2026-11-29T12:00:00Z";
  return w;
}

}  // namespace fusetune::exporter::testing
