// `fusetune kernelbench`: KernelBench's problems through fusetune (map, tune, export ModelNew),
// judged and timed by KernelBench's own eval and timing code from the user's checkout
// (python/fusetune_torch/kernelbench.py, run by embedded_python_run.hpp). The flags are checked
// here, before Python starts, by the rules every command's are.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/embedded_python_run.hpp"
#include "cli/output_args.hpp"
#include "cli/validators.hpp"
#include "common/error.hpp"

namespace fusetune::cli {

void register_kernelbench(CLI::App& app, KernelBenchArgs& args) {
  auto* cmd = app.add_subcommand("kernelbench",
                                 "map, tune and export KernelBench's problems, then judge and time them with "
                                 "KernelBench's own code (needs python3 with torch; a GPU for all but the mapping)");
  const char* env = std::getenv("KERNELBENCH");
  args.kernelbench = env && *env ? env : ".kernelbench";
  cmd->add_option("--kernelbench", args.kernelbench, "a KernelBench checkout (default: $KERNELBENCH, else .kernelbench)")
      ->capture_default_str();
  cmd->add_option("--level", args.level, "KernelBench level")->check(CLI::IsMember({1, 2, 3, 4}))->capture_default_str();
  cmd->add_option("--problems", args.problems, "problem numbers: 1-100, 31,32, 1-10,40")->capture_default_str();
  cmd->add_option("--precision", args.precision, "KernelBench's precision (fp32 until issue 48)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--math", args.math,
                  "auto | tf32 | fp32: fusetune's math mode for tune and export (auto: tf32, then fp32 where "
                  "KernelBench judges the tf32 ModelNew incorrect)")
      ->check(CLI::IsMember({"auto", "tf32", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--time-budget", args.time_budget_s, "seconds of tuning per problem (stored answers are reused)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--db", args.db, "the tuning database (default: OUT/tuning.db)");
  cmd->add_option("--out", args.out, "the run's folder: one record per problem, ModelNew files; a run resumes there")
      ->capture_default_str();
  cmd->add_option("--json", args.json, "write the table and every record as JSON to FILE, or to standard output with -")
      ->type_name("FILE|-");
  cmd->add_option("--csv", args.csv, "write the table as CSV to FILE, or to standard output with -")->type_name("FILE|-");
  cmd->add_option("--trials", args.trials, "KernelBench's correctness trials")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--seed", args.seed, "KernelBench's seed")->capture_default_str();
  cmd->add_option("--perf-trials", args.perf_trials, "timed runs per contender and round")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--rounds", args.rounds, "interleaved rounds (eager, torch.compile x2, ModelNew each round)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--no-timing", args.no_timing, "map, tune, export and judge only");
  cmd->add_flag("--force", args.force, "redo problems whose record is already in OUT");
  cmd->add_flag("--table-only", args.table_only, "the table of the records in OUT (of a cut run too); runs nothing")
      ->excludes("--force");
}

int run_kernelbench(const KernelBenchArgs& args) {
  const std::string db = args.db.empty() ? (std::filesystem::path(args.out) / "tuning.db").string() : args.db;
  OutputArgs outputs{.json = args.json, .csv = args.csv, .other = std::nullopt, .other_flag = ""};
  check_output_args(outputs, db);
  std::vector<std::string> argv = {"--kernelbench", args.kernelbench, "--level", std::to_string(args.level),
                                   "--problems", args.problems, "--precision", args.precision, "--math", args.math,
                                   "--time-budget", fmt::format("{}", args.time_budget_s), "--db", db, "--out", args.out,
                                   "--trials", std::to_string(args.trials), "--seed", std::to_string(args.seed),
                                   "--perf-trials", std::to_string(args.perf_trials), "--rounds",
                                   std::to_string(args.rounds)};
  if (args.json) argv.insert(argv.end(), {"--json", *args.json});
  if (args.csv) argv.insert(argv.end(), {"--csv", *args.csv});
  if (args.no_timing) argv.push_back("--no-timing");
  if (args.force) argv.push_back("--force");
  if (args.table_only) argv.push_back("--table-only");
  // The steps run this very binary (from-torch, tune, export).
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string bin = ec ? std::string("fusetune") : self.string();
  const int code = run_embedded_python("kernelbench", "kernelbench", argv, {"FUSETUNE_BIN=" + bin});
  return code == 0 || code == 2 || code == 3 ? code : int(ExitCode::failure);
}

}  // namespace fusetune::cli
