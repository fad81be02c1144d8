#include "tune/db_bridge.hpp"

#include <cuda.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/compile_target.hpp"
#include "templates/embedded_templates.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "gpu/cudnn_version.hpp"
#include "protocol/protocol.hpp"
#include "tune/result_row.hpp"

namespace fusetune::tune {

db::Environment environment_from_device(const nlohmann::json& device) {
  db::Environment e;
  e.gpu_name = device.value("name", "");
  const auto& l = device.at("limits");
  e.cc_major = l.value("cc_major", 0);
  e.cc_minor = l.value("cc_minor", 0);
  e.sm_count = l.value("sm_count", 0);
  e.mem_bytes = device.value("total_mem", int64_t{0});
  e.driver = device.value("driver", "");
  e.cuda_runtime = fmt::format("{}.{}", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
  e.nvrtc = gpu::nvrtc_version();
  e.cudnn = gpu::cudnn_version_string();
  e.templates_hash = templates::templates_hash();
  return e;
}

db::ResultRecord result_record(const TuneReport& rep, size_t i) {
  const ResultRow row = result_row(rep, i);
  const auto& r = row.result;
  db::ResultRecord rec;
  rec.problem_key = rep.key;
  rec.canonical = rep.problem;
  rec.math = std::string(math_mode_name(rep.math));
  rec.candidate = std::string(row.candidate);
  rec.variant_name = r.variant.name;
  rec.params_json = row.params.dump();
  rec.status = std::string(row.status);
  rec.reason = r.reason;
  rec.log_excerpt = r.log_excerpt;
  rec.registers = r.compile.registers;
  rec.spills = r.compile.spill_stores + r.compile.spill_loads;
  if (r.timed) {
    rec.time_min_ms = r.time.min_ms;
    rec.time_median_ms = r.time.median_ms;
    rec.time_max_ms = r.time.max_ms;
    rec.time_count = r.time.count;
    rec.kernel_median_ms = r.time.kernel_median_ms;
    if (row.kernel) {
      rec.gbps = row.kernel->gbps;
      rec.pct_copy = row.kernel->pct_copy;
    }
  }
  rec.max_abs = r.error.max_abs;
  rec.max_rel = r.error.max_rel;
  rec.rel_l2 = r.error.rel_l2;
  rec.worst_ratio = r.error.worst_ratio;
  rec.rel_l2_limit = r.error.rel_l2_limit;
  if (r.timed) rec.time_round = std::string(time_round_name(r.time.round));
  if (r.timed) rec.gpu = r.gpu;
  return rec;
}

db::WinnerRecord winner_record(const TuneReport& rep, const db::Environment& env) {
  const auto& r = rep.results.at(*rep.winner);
  db::WinnerRecord w;
  w.env = env;
  w.problem_key = rep.key;
  w.canonical = rep.problem;
  w.math = std::string(math_mode_name(rep.math));
  w.candidate = std::string(codegen::candidate_name(r.variant.candidate));
  w.variant_name = r.variant.name;
  w.variant_json = codegen::to_json(r.variant).dump();
  w.compile_options = r.compile.options;
  w.cubin = r.compile.cubin;
  w.ptx = r.compile.ptx;
  w.conv_choices = to_json(rep.conv_choices).dump();
  w.time_median_ms = r.time.median_ms;
  w.time_spread = r.time.spread;
  if (rep.unfused) w.unfused_median_ms = rep.results[*rep.unfused].time.median_ms;
  if (rep.cudnn) w.cudnn_median_ms = rep.results[*rep.cudnn].time.median_ms;
  if (auto it = rep.conv_names.find(r.variant.name); it != rep.conv_names.end())
    w.cudnn_algo = fmt::format("{}", fmt::join(it->second, "; "));
  return w;
}

protocol::VariantResult injected_from_winner(const db::WinnerRecord& w) {
  protocol::VariantResult r;
  r.variant = codegen::variant_from_json(nlohmann::json::parse(w.variant_json));
  r.compile.cubin = w.cubin;
  r.compile.ptx = w.ptx;
  r.compile.options = w.compile_options;
  if (!r.variant.source.empty() && w.cubin.empty()) {
    // A record without its binary (a dump trimmed by hand, a record from a build that did not
    // keep it): compiled here as the tuner would have, for the GPU it was measured on.
    const gpu::CompileOptions o = codegen::compile_options(r.variant, w.env.arch(), w.math == "fp32");
    gpu::CompileResult cr = gpu::compile_cuda(r.variant.source, r.variant.name + ".cu", o);
    if (!cr.ok())
      throw Error(ExitCode::failure, fmt::format("{} does not compile for {}", r.variant.name, o.arch));
    r.compile.cubin = std::move(cr.cubin);
    r.compile.ptx = std::move(cr.ptx);
    r.compile.options = fmt::format("{}", fmt::join(cr.options, " "));
  }
  return r;
}

}  // namespace fusetune::tune
