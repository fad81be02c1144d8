// `fusetune query`: what the database holds: winners (or every result with --all), their
// speedups over the baselines and the environment they were measured in.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/table.hpp"
#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"

namespace fusetune::cli {

namespace {

nlohmann::json env_json(const db::Environment& e) {
  return {{"gpu", e.gpu_name}, {"arch", e.arch()}, {"sm_count", e.sm_count}, {"mem_bytes", e.mem_bytes},
          {"driver", e.driver}, {"cuda_runtime", e.cuda_runtime}, {"nvrtc", e.nvrtc}, {"cudnn", e.cudnn},
          {"templates_hash", e.templates_hash}};
}

nlohmann::json winner_json(const db::WinnerRecord& w) {
  return {{"problem", w.canonical}, {"key", w.problem_key}, {"math", w.math}, {"environment", env_json(w.env)},
          {"name", w.variant_name}, {"candidate", w.candidate}, {"time_ms", w.time_median_ms},
          {"spread", w.time_spread}, {"unfused_ms", w.unfused_median_ms}, {"cudnn_ms", w.cudnn_median_ms},
          {"speedup_vs_unfused", w.speedup_vs_unfused()}, {"speedup_vs_cudnn", w.speedup_vs_cudnn()},
          {"cudnn_algo", w.cudnn_algo}, {"shipped", w.shipped}, {"created_at", w.created_at}};
}

// A result's parameters, stored as JSON text: a flat object when fusetune wrote it. The text
// may come from an imported dump, so it is parsed with a depth limit (printing a deeply
// nested value recurses) and a record it fails is named in one line.
nlohmann::json params_json(const db::ResultRecord& r) {
  constexpr int kMaxDepth = 16;
  try {
    return nlohmann::json::parse(r.params_json.empty() ? "{}" : r.params_json,
                                 [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
                                   if (depth > kMaxDepth) throw InputError("nested too deep");
                                   return true;
                                 });
  } catch (const std::exception&) {
    throw InputError(fmt::format("the stored result {} has unreadable parameters (params_json)",
                                 text::excerpt(r.variant_name, 60)));
  }
}

nlohmann::json result_json(const db::ResultRecord& r) {
  return {{"problem", r.canonical}, {"key", r.problem_key}, {"math", r.math}, {"candidate", r.candidate},
          {"name", r.variant_name}, {"params", params_json(r)},
          {"status", r.status}, {"reason", r.reason}, {"time_ms", {{"min", r.time_min_ms}, {"median", r.time_median_ms},
          {"max", r.time_max_ms}, {"count", r.time_count}}}, {"kernel_ms", r.kernel_median_ms}, {"gbps", r.gbps},
          {"pct_copy", r.pct_copy}, {"max_abs", r.max_abs}, {"rel_l2", r.rel_l2}, {"created_at", r.created_at}};
}

std::string num(double v) { return fmt::format("{}", v); }

}  // namespace

void register_query(CLI::App& app, QueryArgs& args) {
  auto* cmd = app.add_subcommand("query", "show stored winners (or every result) and their speedups");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--gpu", args.gpu, "only environments whose GPU name contains this text");
  cmd->add_option("--math", args.math, "tf32 | fp32 (default: both)")->check(CLI::IsMember({"tf32", "fp32"}));
  cmd->add_flag("--all", args.all, "every result, not only winners");
  cmd->add_option("--format", args.format, "table | json | csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
}

int run_query(const QueryArgs& args) {
  std::optional<std::string> key;
  std::string what = "anything";
  if (args.problem.spec || args.problem.preset) {
    const auto p = spec::resolve_problem(args.problem.spec, args.problem.preset);
    key = spec::problem_key(p);
    what = spec::canonical(p);
  }
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
  const std::optional<std::string> math = args.math.empty() ? std::nullopt : std::optional(args.math);

  if (args.all) {
    const auto rows = database.results(key, args.gpu, math);
    if (rows.empty()) throw NotFoundError(fmt::format("no results stored for {} in {}", what, path));
    if (args.format == "json") {
      nlohmann::json j = {{"schema", "fusetune.query/1"}, {"db", path}, {"results", nlohmann::json::array()}};
      for (const auto& r : rows) j["results"].push_back(result_json(r));
      fmt::print("{}\n", j.dump(2));
    } else if (args.format == "csv") {
      CsvWriter csv({"key", "math", "candidate", "name", "status", "reason", "median_ms", "kernel_ms", "gbps",
                     "pct_copy", "max_abs", "rel_l2", "created_at"});
      for (const auto& r : rows)
        csv.add({r.problem_key, r.math, r.candidate, r.variant_name, r.status, r.reason, num(r.time_median_ms),
                 num(r.kernel_median_ms), num(r.gbps), num(r.pct_copy), num(r.max_abs), num(r.rel_l2), r.created_at});
      fmt::print("{}", csv.text());
    } else {
      Table t({"key", "math", "candidate", "variant", "status", "median ms", "kernel ms", "% copy", "max abs err"});
      for (const auto& r : rows)
        t.add({r.problem_key, r.math, r.candidate, r.variant_name, r.status,
               r.time_median_ms > 0 ? fmt::format("{:.3f}", r.time_median_ms) : "-",
               r.kernel_median_ms > 0 ? fmt::format("{:.3f}", r.kernel_median_ms) : "-",
               r.pct_copy > 0 ? fmt::format("{:.0f}%", r.pct_copy) : "-", fmt::format("{:.2e}", r.max_abs)});
      fmt::print("{}", t.render());
    }
    return 0;
  }

  const auto winners = database.winners(key, args.gpu, math);
  if (winners.empty()) throw NotFoundError(fmt::format("no winner stored for {} in {}", what, path));
  if (args.format == "json") {
    nlohmann::json j = {{"schema", "fusetune.query/1"}, {"db", path}, {"winners", nlohmann::json::array()}};
    for (const auto& w : winners) j["winners"].push_back(winner_json(w));
    fmt::print("{}\n", j.dump(2));
  } else if (args.format == "csv") {
    CsvWriter csv({"key", "problem", "math", "gpu", "driver", "nvrtc", "cudnn", "winner", "candidate", "median_ms",
                   "unfused_ms", "cudnn_ms", "speedup_vs_unfused", "speedup_vs_cudnn", "shipped", "created_at"});
    for (const auto& w : winners)
      csv.add({w.problem_key, w.canonical, w.math, w.env.gpu_name, w.env.driver, w.env.nvrtc, w.env.cudnn,
               w.variant_name, w.candidate, num(w.time_median_ms), num(w.unfused_median_ms), num(w.cudnn_median_ms),
               num(w.speedup_vs_unfused()), num(w.speedup_vs_cudnn()), w.shipped ? "1" : "0", w.created_at});
    fmt::print("{}", csv.text());
  } else {
    Table t({"key", "math", "gpu", "winner", "median ms", "vs unfused", "vs cudnn", "measured", "source"});
    for (const auto& w : winners)
      t.add({w.problem_key, w.math, w.env.gpu_name, w.variant_name, fmt::format("{:.3f}", w.time_median_ms),
             fmt::format("{:.2f}x", w.speedup_vs_unfused()), fmt::format("{:.2f}x", w.speedup_vs_cudnn()),
             w.created_at, w.shipped ? "shipped" : "measured"});
    fmt::print("{}", t.render());
    for (const auto& w : winners) fmt::print("{}  {}\n", text::printable(w.problem_key), text::printable(w.canonical));
  }
  return 0;
}

}  // namespace fusetune::cli
