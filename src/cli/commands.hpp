#pragma once
// One function per subcommand. Each returns the process exit code; errors that carry an
// exit code (fusetune::Error) propagate to main, which prints them as one line.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/output_args.hpp"
#include "cli/validators.hpp"
#include "tune/shard.hpp"

namespace CLI { class App; }

namespace fusetune::cli {

// SPEC or --preset NAME, shared by every command that takes a problem.
struct ProblemArgs {
  std::optional<std::string> spec;
  std::optional<std::string> preset;
};
void add_problem_args(CLI::App* cmd, ProblemArgs& args, bool required = true);

struct CompileArgs {
  ProblemArgs problem;
  std::string arch = "sm_90";
  OutputArgs out;
  bool quiet = false;
  unsigned jobs = 0;
  std::string math = "tf32";
};
void register_compile(CLI::App& app, CompileArgs& args);
int run_compile(const CompileArgs& args);

struct TuneArgs {
  ProblemArgs problem;
  std::optional<std::string> spec_file;  // a sweep: one problem a line
  std::optional<tune::Shard> shard;      // --shard I/N, parsed (and checked) once, while parsing
  std::string math = "tf32";
  // "" (the default): the guided search, `model` (on the H200, 2026-12-02, call 51, it found
  // exhaustive's winner, or one within its noise, on both presets and two more problems,
  // measuring 7-16% of each space); `exhaustive` for a shard of one problem's variants, whose
  // share is what it was asked to run.
  std::string strategy;
  int budget = 0;
  int64_t seed = 0;
  double time_budget_s = 0;
  unsigned jobs = 0;
  int device = 0;
  std::optional<DeviceList> devices;  // --devices LIST|all, parsed (and checked) once, while parsing
  std::string db;
  bool force = false;
  bool all = false;
  bool quiet = false;
  bool no_compile_cache = false;
  OutputArgs out;
  double timeout_s = 60;
  int top_k = 5;
};
void register_tune(CLI::App& app, TuneArgs& args);
int run_tune(const TuneArgs& args);

struct DevicesArgs {
  OutputArgs out;
};
void register_devices(CLI::App& app, DevicesArgs& args);
int run_devices(const DevicesArgs& args);

struct QueryArgs {
  ProblemArgs problem;
  std::string gpu;
  std::string math;
  bool all = false;
  std::string format;  // deprecated --format table|json|csv, kept for old scripts
  OutputArgs out;
  std::string db;
};
void register_query(CLI::App& app, QueryArgs& args);
int run_query(const QueryArgs& args);

struct ExportArgs {
  ProblemArgs problem;
  std::string format;
  std::string output;
  std::string gpu;
  std::string math = "tf32";
  std::string db;
  bool trust = false;  // export a winner whose code cannot be traced to this fusetune
  std::optional<std::string> spec_file;  // torch-patch: the blocks, as from-torch wrote them
  std::optional<std::string> init;       // torch / kernelbench of a version-2 problem: the init file
};
void register_export(CLI::App& app, ExportArgs& args);
int run_export(const ExportArgs& args);

struct DbArgs {
  std::string db;
  std::string file;
  std::vector<std::string> others;  // merge: the databases to merge in
  std::function<std::string()> action;  // which of dump|import|merge|verify was given
  bool trust = false;  // import/merge winners whose code cannot be traced to this fusetune
};
void register_db(CLI::App& app, DbArgs& args);
int run_db(const DbArgs& args);

struct SmokeArgs {
  std::string db;
  OutputArgs out;
  std::string junit_file;
  bool require_gpu = false;
  unsigned jobs = 0;
  std::vector<std::string> checks;
};
void register_smoke(CLI::App& app, SmokeArgs& args);
int run_smoke(const SmokeArgs& args);

// `fusetune report`: one self-contained HTML page (inline SVG plots) from the database.
struct ReportArgs {
  ProblemArgs problem;
  std::string output = "fusetune-report.html";  // -o; "-" is standard output
  std::string math = "tf32";
  std::string gpu;  // only environments whose GPU name contains this text
  std::string db;
};
void register_report(CLI::App& app, ReportArgs& args);
int run_report(const ReportArgs& args);

// `fusetune from-torch FILE.py:Class [--input-shape D0,D1,...] [--train]`: a PyTorch model's
// blocks as a spec file, by the embedded Python package (python/fusetune_torch/) run with python3
// and torch.
struct FromTorchArgs {
  std::string target;                      // FILE.py:Class
  std::optional<std::string> input_shape;  // any rank; default: the file's get_inputs()
  bool train = false;                      // training mode (KernelBench's)
  std::optional<std::string> init_args;  // JSON
  std::string math = "tf32";
  std::string layout = "chain";          // chain | nchw: channels-last between blocks or not
  std::optional<std::string> output;     // the spec file (default: standard output)
  std::optional<std::string> json;       // the blocks as JSON
};
void register_from_torch(CLI::App& app, FromTorchArgs& args);
int run_from_torch(const FromTorchArgs& args);

// `fusetune kernelbench --kernelbench PATH`: KernelBench's problems mapped, tuned, exported as
// ModelNew, judged and timed by KernelBench's own code (python/fusetune_torch/kernelbench.py).
struct KernelBenchArgs {
  std::string kernelbench;                 // the checkout (default $KERNELBENCH, else .kernelbench)
  int level = 2;
  std::string problems = "1-100";
  std::string precision = "fp32";
  std::string math = "auto";  // tf32, then fp32 where KernelBench judges the tf32 ModelNew incorrect
  double time_budget_s = 120;
  std::string db;                          // default OUT/tuning.db
  std::string out = "kernelbench-run";
  std::optional<std::string> json, csv;
  int trials = 5;
  int64_t seed = 42;
  int perf_trials = 100;
  int rounds = 3;
  bool no_timing = false;
  bool force = false;
  bool table_only = false;
};
void register_kernelbench(CLI::App& app, KernelBenchArgs& args);
int run_kernelbench(const KernelBenchArgs& args);

// `fusetune completion bash`: a bash completion script made from this very command tree.
struct CompletionArgs {
  std::string shell = "bash";
};
void register_completion(CLI::App& app, CompletionArgs& args);
int run_completion(const CLI::App& app, const CompletionArgs& args);

}  // namespace fusetune::cli
