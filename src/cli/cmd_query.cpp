// `fusetune query`: what the database holds: winners (or every result with --all), their
// speedups over the baselines and the environment they were measured in.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/query_table.hpp"
#include "codegen/variant_json.hpp"
#include "common/bounded_json.hpp"
#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "protocol/status.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"

namespace fusetune::cli {

namespace {

nlohmann::json env_json(const db::Environment& e) {
  return {{"gpu", e.gpu_name}, {"arch", e.arch()}, {"sm_count", e.sm_count}, {"mem_bytes", e.mem_bytes},
          {"driver", e.driver}, {"cuda_runtime", e.cuda_runtime}, {"nvrtc", e.nvrtc}, {"cudnn", e.cudnn},
          {"templates_hash", e.templates_hash}};
}

// Whether a result was compared with the reference (its error figures mean something).
bool checked(const db::ResultRecord& r) {
  return protocol::is_status(r.status, protocol::Status::ok) || protocol::is_status(r.status, protocol::Status::wrong_result);
}
nlohmann::json text_or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

// The winner's parameters from its stored variant ({"name": value}); null when the record's
// variant does not parse (it may come from an imported dump; `db verify` names such records).
nlohmann::json winner_params(const db::WinnerRecord& w) {
  try {
    return codegen::params_object(codegen::variant_from_json(parse_bounded(w.variant_json)));
  } catch (const std::exception&) {
    return nullptr;
  }
}

nlohmann::json winner_json(const db::WinnerRecord& w) {
  return {{"problem", w.canonical}, {"key", w.problem_key}, {"math", w.math}, {"environment", env_json(w.env)},
          {"name", w.variant_name}, {"candidate", w.candidate}, {"params", winner_params(w)},
          {"time_ms", {{"median", measured_json(w.time_median_ms)}, {"spread", w.time_spread}}},
          {"unfused_ms", measured_json(w.unfused_median_ms)}, {"cudnn_ms", measured_json(w.cudnn_median_ms)},
          {"speedup_vs_unfused", measured_json(w.speedup_vs_unfused())}, {"speedup_vs_cudnn", measured_json(w.speedup_vs_cudnn())},
          {"cudnn_algo", text_or_null(w.cudnn_algo)}, {"shipped", w.shipped}, {"created_at", w.created_at}};
}

nlohmann::json result_json(const db::ResultRecord& r) {
  const bool timed = r.time_median_ms > 0;
  return {{"problem", r.canonical}, {"key", r.problem_key}, {"math", r.math}, {"candidate", r.candidate},
          {"name", r.variant_name}, {"params", record_params(r)}, {"status", r.status}, {"reason", text_or_null(r.reason)},
          {"time_ms", timed ? nlohmann::json{{"min", r.time_min_ms}, {"median", r.time_median_ms},
                                             {"max", r.time_max_ms}, {"count", r.time_count}}
                            : nlohmann::json(nullptr)},
          {"kernel", r.gbps > 0 ? nlohmann::json{{"median_ms", r.kernel_median_ms}, {"gbps", r.gbps},
                                                 {"pct_copy", r.pct_copy}}
                                : nlohmann::json(nullptr)},
          {"error", checked(r)
                        ? nlohmann::json{{"max_abs", r.max_abs}, {"max_rel", r.max_rel}, {"rel_l2", r.rel_l2},
                                         {"rel_l2_limit", measured_json(r.rel_l2_limit)}, {"worst_ratio", r.worst_ratio}}
                        : nlohmann::json(nullptr)},
          {"gpu", timed && r.gpu >= 0 ? nlohmann::json(r.gpu) : nlohmann::json(nullptr)},
          {"created_at", r.created_at}};
}

}  // namespace

void register_query(CLI::App& app, QueryArgs& args) {
  auto* cmd = app.add_subcommand("query", "show stored winners (or every result) and their speedups");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--gpu", args.gpu, "only environments whose GPU name contains this text");
  cmd->add_option("--math", args.math, "tf32 | fp32 (default: both)")->check(CLI::IsMember({"tf32", "fp32"}));
  cmd->add_flag("--all", args.all, "every result, not only winners");
  add_output_args(cmd, args.out, "one row per winner, or per result with --all");
  // Before --json/--csv: kept so that old scripts work; not in --help.
  // A hidden option's name is missing from CLI11's own message (": xml not in {...}"): this one
  // names it (main() drops the empty name's ": ").
  cmd->add_option("--format", args.format)
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "table" || v == "json" || v == "csv") return {};
            return fmt::format("--format must be table, json or csv, got '{}' (or use --json, --csv)",
                               text::excerpt(v, 24));
          },
          "", "format"))
      ->group("");
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
}

int run_query(const QueryArgs& args) {
  OutputArgs out = args.out;
  if (args.format == "json" && !out.json) out.json = "-";
  if (args.format == "csv" && !out.csv) out.csv = "-";
  std::optional<std::string> key;
  std::string what = "anything";
  if (args.problem.spec || args.problem.preset) {
    const auto p = spec::resolve_problem(args.problem.spec, args.problem.preset);
    key = spec::problem_key(p);
    what = spec::canonical(p);
  }
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  check_output_args(out, path);
  auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
  const std::optional<std::string> math = args.math.empty() ? std::nullopt : std::optional(args.math);
  const auto winners = database.winners(key, args.gpu, math);
  nlohmann::json j = json_document("query", out);
  j["db"] = path;

  if (args.all) {
    const auto rows = database.results(key, args.gpu, math);
    if (rows.empty()) throw NotFoundError(fmt::format("no results stored for {} in {}", what, path));
    j["results"] = nlohmann::json::array();
    for (const auto& r : rows) j["results"].push_back(result_json(r));
    CsvWriter csv({"key", "math", "candidate", "name", "params", "status", "reason", "median_ms", "kernel_ms", "gbps",
                   "pct_copy", "max_abs", "rel_l2", "created_at"});
    for (const auto& r : rows)
      csv.add({r.problem_key, r.math, r.candidate, r.variant_name, record_params(r).dump(), r.status, r.reason,
               measured_csv(r.time_median_ms), measured_csv(r.kernel_median_ms), measured_csv(r.gbps), measured_csv(r.pct_copy),
               checked(r) ? csv_figure(r.max_abs) : "", checked(r) ? csv_figure(r.rel_l2) : "", r.created_at});
    write_outputs(out, j, csv.text());
    if (out.human_on_stdout()) {
      std::map<std::string, std::string> gpu_names;
      for (const auto& r : rows)
        if (!gpu_names.contains(r.env_fingerprint))
          if (auto e = database.environment(r.env_fingerprint)) gpu_names[r.env_fingerprint] = e->gpu_name;
      fmt::print("{}", results_table(rows, winners, gpu_names));
    }
    return 0;
  }

  if (winners.empty()) throw NotFoundError(fmt::format("no winner stored for {} in {}", what, path));
  j["winners"] = nlohmann::json::array();
  for (const auto& w : winners) j["winners"].push_back(winner_json(w));
  CsvWriter csv({"key", "problem", "math", "gpu", "driver", "nvrtc", "cudnn", "winner", "candidate", "params",
                 "median_ms", "unfused_ms", "cudnn_ms", "speedup_vs_unfused", "speedup_vs_cudnn", "shipped",
                 "created_at"});
  for (const auto& w : winners)
    csv.add({w.problem_key, w.canonical, w.math, w.env.gpu_name, w.env.driver, w.env.nvrtc, w.env.cudnn,
             w.variant_name, w.candidate, winner_params(w).dump(), measured_csv(w.time_median_ms),
             measured_csv(w.unfused_median_ms), measured_csv(w.cudnn_median_ms), measured_csv(w.speedup_vs_unfused()),
             measured_csv(w.speedup_vs_cudnn()), w.shipped ? "1" : "0", w.created_at});
  write_outputs(out, j, csv.text());
  if (out.human_on_stdout()) fmt::print("{}", winners_table(winners));
  return 0;
}

}  // namespace fusetune::cli
