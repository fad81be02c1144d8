// `fusetune smoke`: one line per check, a summary line, non-zero exit on any failure.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/junit.hpp"
#include "cli/validators.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "cli/smoke.hpp"

namespace fusetune::cli {

void register_smoke(CLI::App& app, SmokeArgs& args) {
  auto* cmd = app.add_subcommand("smoke", "CI check: everything compiles, the database works, winners still win");
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  add_output_args(cmd, args.out, "one row per check");
  cmd->add_option("--junit", args.junit_file, "also write the checks as JUnit XML to this file (for CI test reports)");
  cmd->add_flag("--require-gpu", args.require_gpu,
                "fail (not skip) when no GPU is found, so a GPU CI job cannot pass without one");
  cmd->add_option("--jobs,-j", args.jobs, "parallel NVRTC compiles (default: all cores)")
      ->check(integer_in(1, kMaxJobs));
  cmd->add_option("--checks", args.checks, "only these groups: compile,database,exports,gpu-tiny,winners")
      ->delimiter(',')
      ->check(CLI::IsMember({"compile", "database", "exports", "gpu-tiny", "winners"}));
}

int run_smoke(const SmokeArgs& args) {
  OutputArgs out = args.out;
  if (!args.junit_file.empty()) out.other = args.junit_file;
  SmokeOptions o;
  o.db_path = args.db.empty() ? db::default_db_path() : args.db;
  check_output_args(out, o.db_path);
  // The check lines are for people: on stderr when a document takes stdout.
  std::FILE* human = out.human_on_stdout() ? stdout : stderr;
  o.jobs = args.jobs;
  o.stale = std::getenv("FUSETUNE_TEST_STALE") != nullptr;
  if (!args.checks.empty()) o.checks = {args.checks.begin(), args.checks.end()};
  o.on_check = [human](const SmokeCheck& c) {
    const char* word = c.outcome == SmokeCheck::Outcome::passed   ? "ok  "
                       : c.outcome == SmokeCheck::Outcome::failed ? "FAIL"
                                                                        : "skip";
    fmt::print(human, "{}  {}{}{}\n", word, text::printable(c.name), c.detail.empty() ? "" : ": ",
               text::printable(c.detail));
    std::fflush(human);
  };
  auto checks = run_smoke(o);
  if (args.require_gpu) {
    std::string why;
    int count = 0;
    try {
      if (gpu::driver_available(&why)) count = gpu::device_count();
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (count == 0) {
      SmokeCheck c{"a GPU (--require-gpu)", SmokeCheck::Outcome::failed,
                         why.empty() ? "the driver sees no GPU" : why};
      o.on_check(c);
      checks.push_back(c);
    }
  }
  size_t passed = 0, failed = 0, skipped = 0;
  nlohmann::json j = json_document("smoke", args.out);
  j["db"] = o.db_path;
  j["checks"] = nlohmann::json::array();
  CsvWriter csv({"name", "outcome", "detail"});
  for (const auto& c : checks) {
    const char* outcome = c.outcome == SmokeCheck::Outcome::passed   ? "passed"
                          : c.outcome == SmokeCheck::Outcome::failed ? "failed"
                                                                           : "skipped";
    passed += c.outcome == SmokeCheck::Outcome::passed;
    failed += c.outcome == SmokeCheck::Outcome::failed;
    skipped += c.outcome == SmokeCheck::Outcome::skipped;
    j["checks"].push_back({{"name", c.name}, {"outcome", outcome},
                           {"detail", c.detail.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.detail)}});
    csv.add({c.name, outcome, c.detail});
  }
  j["summary"] = {{"passed", passed}, {"failed", failed}, {"skipped", skipped}};
  write_outputs(args.out, j, csv.text());
  if (!args.junit_file.empty()) write_output_file(args.junit_file, junit_xml(checks));
  fmt::print(human, "smoke: {} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return failed ? int(ExitCode::failure) : int(ExitCode::ok);
}

}  // namespace fusetune::cli
