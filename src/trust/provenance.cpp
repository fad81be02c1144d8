#include "trust/provenance.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <optional>

#include "codegen/candidates.hpp"
#include "codegen/compile_target.hpp"
#include "templates/embedded_templates.hpp"
#include "codegen/cudnn_engine.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "gpu/compiler.hpp"
#include "spec/parser.hpp"

namespace fusetune::trust {

namespace {

// Device limits only prune a search space; they never change a variant's source or plan
// (src/codegen/space_common.cpp). Generous limits regenerate every variant any GPU of the
// architecture could have kept.
gpu::DeviceLimits generous_limits(const db::Environment& env) {
  gpu::DeviceLimits l;
  l.cc_major = env.cc_major;
  l.cc_minor = env.cc_minor;
  l.max_threads_per_block = 1024;
  l.max_threads_per_sm = 2048;
  l.smem_per_block = l.smem_per_block_optin = 232448;
  l.smem_per_sm = 233472;
  l.regs_per_block = l.regs_per_sm = 65536;
  return l;
}

}  // namespace

Provenance check_provenance(const db::WinnerRecord& w) {
  using V = Provenance::Verdict;
  // Records of other kernel templates are checked the same way: a template change elsewhere
  // (another design's kernel) leaves this variant's source as it was, and then its code is
  // still exactly this fusetune's. Only a difference makes them untraceable, not forged: older
  // templates generated other code honestly.
  const bool other_templates = w.env.templates_hash != templates::templates_hash();
  const auto differs = [&](const std::string& what) -> Provenance {
    if (other_templates)
      return {V::untraceable, fmt::format("it was generated from other kernel templates (hash {}, this fusetune's {}) "
                                          "and {}, so its code cannot be checked",
                                          w.env.templates_hash, templates::templates_hash(), what)};
    return {V::forged, fmt::format("its {}", what)};
  };
  const spec::Problem problem = spec::parse(w.canonical);
  codegen::GenerateOptions gen;
  gen.problem_text = w.canonical;
  gen.strict_fp32 = w.math == "fp32";
  const nlohmann::json stored = nlohmann::json::parse(w.variant_json);
  const std::string name = stored.at("name").get<std::string>();
  // A cudnn-fused variant is a generated template pinned to the engine configuration its
  // parameters name (the GPU listed it): regenerate the template and pin it the same way.
  std::optional<codegen::EngineKey> engine;
  try {
    engine = codegen::engine_of(codegen::variant_from_json(stored));
  } catch (const std::exception&) {
  }
  for (auto v : codegen::generate_variants(problem, generous_limits(w.env), gen)) {
    if (codegen::engines_at_run_time(v) && engine && !codegen::engine_of(v))
      v = codegen::with_engine(v, *engine);
    if (v.name != name) continue;
    if (codegen::to_json(v) != stored)
      return differs(fmt::format("source or plan is not what this fusetune generates for {}", name));
    if (w.cubin.empty() && w.ptx.empty()) return {};
    if (w.env.nvrtc != gpu::nvrtc_version())
      return {V::untraceable,
              fmt::format("its CUBIN was built by NVRTC {} and this fusetune has NVRTC {}: it cannot be checked",
                          w.env.nvrtc, gpu::nvrtc_version())};
    // The options the record says NVRTC got must be ones fusetune passes for its arch and math
    // (ptxas writes its own options into the CUBIN, so they must match to compare bytes).
    std::optional<gpu::CompileOptions> options;
    for (bool verbose : {true, false}) {
      // The regenerated variant says which target it needs (sm_90a for wgmma kernels).
      gpu::CompileOptions o = codegen::compile_options(v, w.env.arch(), w.math == "fp32");
      o.ptxas_verbose = verbose;
      if (fmt::format("{}", fmt::join(gpu::nvrtc_options(o), " ")) == w.compile_options) options = o;
    }
    if (!options) return {V::forged, "its compile options are not ones this fusetune passes to NVRTC"};
    const gpu::CompileOptions& o = *options;
    const gpu::CompileResult r = gpu::compile_cuda(v.source, v.name + ".cu", o);
    if (!r.ok()) return {V::forged, fmt::format("its source does not compile for {}", o.arch)};
    if ((!w.cubin.empty() && r.cubin != w.cubin) || (!w.ptx.empty() && r.ptx != w.ptx))
      return {V::forged, "its CUBIN or PTX is not what NVRTC makes of its source"};
    return {};
  }
  return differs(fmt::format("name {} is no variant this fusetune generates for the problem", name));
}

std::optional<codegen::Variant> regenerate_variant(const db::Environment& env, const std::string& canonical,
                                                   const std::string& math, const std::string& name) {
  codegen::GenerateOptions gen;
  gen.problem_text = canonical;
  gen.strict_fp32 = math == "fp32";
  for (auto& v : codegen::generate_variants(spec::parse(canonical), generous_limits(env), gen))
    if (v.name == name && !codegen::engines_at_run_time(v)) return std::move(v);
  return std::nullopt;
}

}  // namespace fusetune::trust
