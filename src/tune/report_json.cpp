#include "tune/report_json.hpp"

#include "codegen/variant_json.hpp"
#include "protocol/protocol.hpp"

namespace fusetune::tune {

namespace {

nlohmann::json time_json(const protocol::TimeFigures& t) {
  return {{"min", t.min_ms},       {"median", t.median_ms}, {"max", t.max_ms},
          {"count", t.count},      {"spread", t.spread},    {"round", time_round_name(t.round)},
          {"batch", t.batch},      {"steps", t.step_median_ms}};
}

}  // namespace

nlohmann::json result_to_json(const TuneReport& rep, size_t i) {
  const auto& r = rep.results[i];
  nlohmann::json j;
  j["candidate"] = codegen::candidate_name(r.variant.candidate);
  j["role"] = codegen::role_name(r.variant.role());
  j["design"] = r.variant.design;
  j["name"] = r.variant.name;
  j["params"] = codegen::params_object(r.variant);
  j["status"] = protocol::status_name(r.status);
  // Every key is always there; what was not measured is null (docs/output.md: "JSON output").
  j["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
  j["verified"] = r.verified;
  const bool compiled = r.compile.registers >= 0;
  j["registers"] = compiled ? nlohmann::json(r.compile.registers) : nlohmann::json(nullptr);
  j["spills"] = compiled ? nlohmann::json(r.compile.spill_stores + r.compile.spill_loads) : nlohmann::json(nullptr);
  for (const char* k : {"time_ms", "kernel", "speedup_vs_unfused", "speedup_vs_cudnn", "error", "cudnn_algo"})
    j[k] = nullptr;
  // The GPU (ordinal) whose figures time_ms holds: with --devices, the first passes come from
  // every GPU, the finalist and confirmation rounds from the first.
  j["gpu"] = r.timed && r.gpu >= 0 ? nlohmann::json(r.gpu) : nlohmann::json(nullptr);
  if (r.timed) {
    j["time_ms"] = time_json(r.time);
    if (r.time.kernel_median_ms > 0 && r.variant.kernel_bytes > 0) {
      const double gbps = r.variant.kernel_bytes / (r.time.kernel_median_ms * 1e-3) / 1e9;
      j["kernel"] = {{"median_ms", r.time.kernel_median_ms}, {"bytes", r.variant.kernel_bytes}, {"gbps", gbps},
                     {"pct_copy", rep.copy_gbps > 0 ? 100.0 * gbps / rep.copy_gbps : 0.0}};
    }
    if (rep.unfused) j["speedup_vs_unfused"] = speedup(rep, *rep.unfused, i);
    if (rep.cudnn) j["speedup_vs_cudnn"] = speedup(rep, *rep.cudnn, i);
  }
  if (r.verified || r.status == protocol::Status::wrong_result)
    j["error"] = {{"max_abs", r.error.max_abs},   {"max_rel", r.error.max_rel},
                  {"rel_l2", r.error.rel_l2},     {"rel_l2_limit", r.error.rel_l2_limit},
                  {"worst_ratio", r.error.worst_ratio}, {"unchecked", r.error.unchecked},
                  {"rule", rep.math == MathMode::tf32 ? "tf32 derived bound" : "fp32 1e-4 + 1e-4*|ref|"}};
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
