#include "report/figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "codegen/variant.hpp"
#include "common/bounded_json.hpp"
#include "protocol/status.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::report {

namespace {

// A candidate this fusetune does not know (a dump from a newer one) is drawn as a solution.
codegen::Role role(const db::ResultRecord& r) {
  const auto c = codegen::candidate_from_name(r.candidate);
  return c ? codegen::role_of(*c) : codegen::Role::solution;
}

bool ok(const db::ResultRecord& r) { return protocol::is_status(r.status, protocol::Status::ok); }
bool timed_ok(const db::ResultRecord& r) { return ok(r) && positive(r.time_median_ms); }
bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The fastest timed ok result of `r`'s role, or null.
const db::ResultRecord* fastest(const std::vector<db::ResultRecord>& results, codegen::Role want) {
  const db::ResultRecord* best = nullptr;
  for (const auto& r : results)
    if (timed_ok(r) && role(r) == want && (!best || r.time_median_ms < best->time_median_ms)) best = &r;
  return best;
}

// params_json as stored: a flat object when fusetune wrote it, but it may come from an
// imported dump, so nesting is limited (as `query` does) and anything else is "unreadable".
std::optional<nlohmann::json> read_params(const std::string& text) {
  try {
    auto j = parse_bounded(text.empty() ? "{}" : text);
    if (!j.is_object()) return std::nullopt;
    return j;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  } catch (const JsonTooDeep&) {
    return std::nullopt;
  }
}

std::optional<int64_t> integer(const nlohmann::json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return int64_t(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

void param_effects(const std::vector<const db::ResultRecord*>& solutions, Figures& f) {
  std::map<std::string, std::map<int64_t, std::vector<double>>> by_name;
  std::map<std::string, std::set<std::string>> candidates;
  for (const auto* r : solutions) {
    const auto params = read_params(r->params_json);
    if (!params) {
      ++f.unreadable_params;
      continue;
    }
    for (const auto& [name, value] : params->items())
      if (const auto v = integer(value)) {
        by_name[name][*v].push_back(r->time_median_ms);
        candidates[name].insert(r->candidate);
      }
  }
  for (const auto& [name, values] : by_name) {
    if (values.size() < 2) continue;  // one value: nothing to compare
    if (f.params.size() == kMaxParamCharts) {
      ++f.params_left_out;
      continue;
    }
    ParamEffect e;
    e.name = name;
    e.candidates.assign(candidates[name].begin(), candidates[name].end());
    for (const auto& [value, times] : values) {
      if (e.values.size() == kMaxParamValues) {
        ++e.values_left_out;
        continue;
      }
      e.values.push_back({value, median(times), times.size()});
    }
    f.params.push_back(std::move(e));
  }
}

}  // namespace

bool positive(double v) { return std::isfinite(v) && v > 0; }

Roofline roofline_floor(const spec::Problem& problem, const std::optional<db::Environment>& env,
                        const std::string& math, std::optional<double> copy_gbps) {
  Roofline r;
  if (problem.is_conv2d_chain()) {
    r.flops = problem.conv.flops();
    r.bytes = double(problem.conv.input_elems() + problem.out_elems()) * 4.0;
  } else {
    // Version 2: the main operator's FLOP; its input and the problem's output, as for conv2d.
    const spec::Gemm& g = problem.gemm;
    r.flops = problem.is_conv() ? problem.conv.flops() : g.flops();
    const double in = problem.is_conv() ? double(problem.conv.input_elems()) : double(g.batch * g.m * g.k);
    r.bytes = (in + double(spec::elems(spec::out_shape(problem)))) * 4.0;
  }
  r.copy_gbps = copy_gbps;
  // Dense datasheet rates of an H200 (132 SMs): TF32 tensor cores, and fp32 on the CUDA cores.
  constexpr double kTf32Tflops = 495, kFp32Tflops = 67, kSms = 132;
  if (!env) {
    r.note = "no roofline floor: the GPU of these results is not known";
    return r;
  }
  if (env->cc_major != 9 || env->cc_minor != 0) {
    r.note = fmt::format("no roofline floor: peak rates are known for sm_90 GPUs only, and these results come from {}",
                         env->arch());
    return r;
  }
  if (env->sm_count <= 0) {
    r.note = "no roofline floor: the GPU's SM count is not known";
    return r;
  }
  r.peak_tflops = (math == "fp32" ? kFp32Tflops : kTf32Tflops) * env->sm_count / kSms;
  const double compute_ms = r.flops / (r.peak_tflops * 1e12) * 1e3;
  if (!positive(compute_ms)) {
    r.note = "no roofline floor: the problem has no work";
    return r;
  }
  if (copy_gbps && positive(*copy_gbps)) {
    const double memory_ms = r.bytes / (*copy_gbps * 1e9) * 1e3;
    r.ms = std::max(compute_ms, memory_ms);
    r.note = fmt::format("max({:.1f} GFLOP at {:.0f} TFLOP/s = {:.3f} ms, {:.3f} GB at the measured copy bandwidth "
                         "{:.0f} GB/s = {:.3f} ms)",
                         r.flops / 1e9, r.peak_tflops, compute_ms, r.bytes / 1e9, *copy_gbps, memory_ms);
  } else {
    r.ms = compute_ms;
    r.note = fmt::format("{:.1f} GFLOP at {:.0f} TFLOP/s = {:.3f} ms (compute only: no copy bandwidth was measured "
                         "with these results)",
                         r.flops / 1e9, r.peak_tflops, compute_ms);
  }
  return r;
}

Figures analyze(const ReportData& data) {
  Figures f;
  for (const auto& r : data.results)
    if (timed_ok(r) && role(r) == codegen::Role::solution) f.solutions.push_back(&r);
  std::stable_sort(f.solutions.begin(), f.solutions.end(),
                   [](const auto* a, const auto* b) { return a->time_median_ms < b->time_median_ms; });
  f.unfused = fastest(data.results, codegen::Role::baseline);
  f.conv_floor = fastest(data.results, codegen::Role::floor);

  // Each result's bandwidth is a share of the copy measured in its run: read the copy back.
  std::vector<double> copies;
  for (const auto& r : data.results) {
    if (!positive(r.gbps)) continue;
    f.bandwidth.push_back(&r);
    if (positive(r.pct_copy)) copies.push_back(r.gbps / (r.pct_copy / 100));
  }
  std::stable_sort(f.bandwidth.begin(), f.bandwidth.end(), [](const auto* a, const auto* b) { return a->gbps > b->gbps; });
  if (!copies.empty() && positive(median(copies))) f.copy_gbps = median(copies);
  f.roofline = roofline_floor(data.problem, data.env, data.math, f.copy_gbps);

  param_effects(f.solutions, f);

  for (const auto& r : data.results) {
    if (ok(r) && finite_nonnegative(r.worst_ratio)) f.verified.push_back(&r);
    if (ok(r) && positive(r.rel_l2_limit) && finite_nonnegative(r.rel_l2)) f.rel_l2.push_back(&r);
    if (!timed_ok(r)) f.failed.push_back(&r);
  }
  std::stable_sort(f.verified.begin(), f.verified.end(),
                   [](const auto* a, const auto* b) { return a->worst_ratio > b->worst_ratio; });
  std::stable_sort(f.rel_l2.begin(), f.rel_l2.end(), [](const auto* a, const auto* b) {
    return a->rel_l2 / a->rel_l2_limit > b->rel_l2 / b->rel_l2_limit;
  });
  return f;
}

}  // namespace fusetune::report
