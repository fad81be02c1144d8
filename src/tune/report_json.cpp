#include "tune/report_json.hpp"

#include "codegen/variant_json.hpp"

namespace fusetune::tune {

nlohmann::json result_to_json(const TuneReport& rep, size_t i) {
  const auto& r = rep.results[i];
  nlohmann::json j;
  j["candidate"] = r.variant.candidate;
  j["name"] = r.variant.name;
  j["params"] = codegen::params_object(r.variant);
  j["status"] = status_name(r.status);
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["verified"] = r.verified;
  j["registers"] = r.compile.registers;
  j["spills"] = r.compile.spill_stores + r.compile.spill_loads;
  if (r.timed) {
    j["time_ms"] = {{"min", r.time.min_ms}, {"median", r.time.median_ms}, {"max", r.time.max_ms}, {"count", r.time.count}};
    if (r.time.kernel_median_ms > 0 && r.variant.kernel_bytes > 0) {
      const double gbps = r.variant.kernel_bytes / (r.time.kernel_median_ms * 1e-3) / 1e9;
      j["kernel"] = {{"median_ms", r.time.kernel_median_ms}, {"bytes", r.variant.kernel_bytes}, {"gbps", gbps},
                     {"pct_copy", rep.copy_gbps > 0 ? 100.0 * gbps / rep.copy_gbps : 0.0}};
    }
    if (rep.unfused) j["speedup_vs_unfused"] = speedup(rep, *rep.unfused, i);
    if (rep.cudnn) j["speedup_vs_cudnn"] = speedup(rep, *rep.cudnn, i);
  }
  if (r.verified || r.status == Status::wrong_result)
    j["error"] = {{"max_abs", r.error.max_abs}, {"max_rel", r.error.max_rel}, {"rel_l2", r.error.rel_l2}};
  if (auto it = rep.conv_names.find(r.variant.name); it != rep.conv_names.end()) j["cudnn_algo"] = *it;
  return j;
}

nlohmann::json report_to_json(const TuneReport& rep) {
  nlohmann::json j;
  j["schema"] = "fusetune.tune/1";
  j["problem"] = rep.problem;
  j["key"] = rep.key;
  j["math"] = rep.math;
  j["device"] = rep.device;
  j["copy_gbps"] = rep.copy_gbps;
  j["worker_restarts"] = rep.worker_restarts;
  j["results"] = nlohmann::json::array();
  for (size_t i = 0; i < rep.results.size(); ++i) j["results"].push_back(result_to_json(rep, i));
  j["winner"] = rep.winner ? result_to_json(rep, *rep.winner) : nlohmann::json(nullptr);
  // The winner's whole variant (source, plan, launch shapes), so bench/ and exports can run it.
  if (rep.winner) j["winner"]["variant"] = codegen::to_json(rep.results[*rep.winner].variant);
  j["baselines"] = {{"unfused", rep.unfused ? nlohmann::json(rep.results[*rep.unfused].variant.name) : nlohmann::json(nullptr)},
                    {"cudnn", rep.cudnn ? nlohmann::json(rep.results[*rep.cudnn].variant.name) : nlohmann::json(nullptr)}};
  return j;
}

}  // namespace fusetune::tune
