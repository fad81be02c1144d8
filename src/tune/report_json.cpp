#include "tune/report_json.hpp"

#include "codegen/variant_json.hpp"
#include "protocol/protocol.hpp"
#include "tune/result_row.hpp"

namespace fusetune::tune {

namespace {

nlohmann::json time_json(const protocol::TimeFigures& t) {
  return {{"min", t.min_ms},       {"median", t.median_ms}, {"max", t.max_ms},
          {"count", t.count},      {"spread", t.spread},    {"round", time_round_name(t.round)},
          {"batch", t.batch},      {"steps", t.step_median_ms}};
}

}  // namespace

nlohmann::json result_to_json(const TuneReport& rep, size_t i) {
  const ResultRow row = result_row(rep, i);
  const auto& r = row.result;
  nlohmann::json j;
  j["candidate"] = row.candidate;
  j["role"] = row.role;
  j["design"] = r.variant.design;
  j["name"] = r.variant.name;
  j["params"] = row.params;
  j["status"] = row.status;
  // Every key is always there; what was not measured is null (docs/output.md: "JSON output").
  j["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
  j["verified"] = r.verified;
  j["registers"] = row.registers ? nlohmann::json(*row.registers) : nlohmann::json(nullptr);
  j["spills"] = row.spills ? nlohmann::json(*row.spills) : nlohmann::json(nullptr);
  for (const char* k : {"time_ms", "kernel", "speedup_vs_unfused", "speedup_vs_cudnn", "error", "cudnn_algo"})
    j[k] = nullptr;
  // The GPU (ordinal) whose figures time_ms holds: with --devices, the first passes come from
  // every GPU, the finalist and confirmation rounds from the first.
  j["gpu"] = r.timed && r.gpu >= 0 ? nlohmann::json(r.gpu) : nlohmann::json(nullptr);
  if (r.timed) {
    j["time_ms"] = time_json(r.time);
    if (row.kernel)
      j["kernel"] = {{"median_ms", row.kernel->median_ms}, {"bytes", row.kernel->bytes}, {"gbps", row.kernel->gbps},
                     {"pct_copy", row.kernel->pct_copy}};
    if (row.vs_unfused) j["speedup_vs_unfused"] = *row.vs_unfused;
    if (row.vs_cudnn) j["speedup_vs_cudnn"] = *row.vs_cudnn;
  }
  if (row.checked)
    j["error"] = {{"max_abs", r.error.max_abs},   {"max_rel", r.error.max_rel},
                  {"rel_l2", r.error.rel_l2},     {"rel_l2_limit", r.error.rel_l2_limit},
                  {"worst_ratio", r.error.worst_ratio}, {"unchecked", r.error.unchecked},
                  {"rule", rep.math == MathMode::tf32 ? "tf32 derived bound"
                                                      : "fp32 1e-4 + 1e-4*|ref| + 6 sd of fp32 rounding"}};
  if (auto it = rep.conv_names.find(r.variant.name); it != rep.conv_names.end()) j["cudnn_algo"] = it->second;
  return j;
}

nlohmann::json report_to_json(const TuneReport& rep) {
  const auto name = [&](std::optional<size_t> i) {
    return i ? nlohmann::json(rep.results[*i].variant.name) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  j["schema"] = "fusetune.tune/2";
  j["problem"] = rep.problem;
  j["key"] = rep.key;
  j["math"] = math_mode_name(rep.math);
  j["device"] = rep.device;
  j["devices"] = rep.devices;
  j["copy_gbps"] = rep.copy_gbps;
  j["worker_restarts"] = rep.worker_restarts;
  j["confirm_rounds"] = rep.confirm_rounds;
  j["phases_s"] = nlohmann::json::object();
  for (const auto& [phase, s] : rep.phase_seconds) j["phases_s"][phase] = s;
  j["notes"] = rep.notes;
  j["results"] = nlohmann::json::array();
  for (size_t i = 0; i < rep.results.size(); ++i) j["results"].push_back(result_to_json(rep, i));
  j["winner"] = rep.winner ? result_to_json(rep, *rep.winner) : nlohmann::json(nullptr);
  // The winner's and the baseline's whole variants (source, plan, launch shapes), so bench/
  // and exports can run them.
  if (rep.winner) j["winner"]["variant"] = codegen::to_json(rep.results[*rep.winner].variant);
  j["runner_up"] = name(rep.runner_up);
  j["tie"] = nullptr;
  if (rep.tie.tie && rep.runner_up)
    j["tie"] = {{"with", rep.results[*rep.runner_up].variant.name}, {"gap", rep.tie.gap}, {"noise", rep.tie.noise},
                {"broken_by", rep.tie.by}};
  j["shard"] = rep.shard.whole() ? nlohmann::json(nullptr)
                                 : nlohmann::json{{"index", rep.shard.index}, {"count", rep.shard.count}};
  j["baselines"] = {{"unfused", name(rep.unfused)}, {"cudnn", name(rep.cudnn)}};
  if (rep.unfused) j["baselines"]["unfused_variant"] = codegen::to_json(rep.results[*rep.unfused].variant);
  return j;
}

}  // namespace fusetune::tune
