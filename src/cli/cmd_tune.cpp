// `fusetune tune`: find the fastest verified implementation of a problem on this GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/format.hpp"
#include "cli/input_file.hpp"
#include "cli/progress.hpp"
#include "cli/text_fit.hpp"
#include "cli/tune_table.hpp"
#include "cli/validators.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/output_guard.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "gpu/driver_api.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "spec/spec_list.hpp"
#include "spec/support.hpp"
#include "trust/record_check.hpp"
#include "tune/compile_cache.hpp"
#include "tune/device_cache.hpp"
#include "tune/db_bridge.hpp"
#include "tune/report_json.hpp"
#include "tune/result_row.hpp"
#include "tune/shard.hpp"
#include "tune/tuner.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::cli {

namespace {


// One row per variant, in the report's order; empty cells where nothing was measured.
std::string results_csv(const tune::TuneReport& rep) {
  CsvWriter csv({"role", "candidate", "name", "params", "status", "reason", "median_ms", "round", "speedup_vs_unfused",
                 "speedup_vs_cudnn", "worst_ratio", "max_abs"});
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const tune::ResultRow row = tune::result_row(rep, i);
    const auto& r = row.result;
    csv.add({std::string(row.role), std::string(row.candidate), r.variant.name, row.params.dump(), std::string(row.status),
             r.reason, r.timed ? measured_csv(r.time.median_ms) : "",
             r.timed ? std::string(protocol::time_round_name(r.time.round)) : "",
             row.vs_unfused ? measured_csv(*row.vs_unfused) : "", row.vs_cudnn ? measured_csv(*row.vs_cudnn) : "",
             row.checked ? csv_figure(r.error.worst_ratio) : "", row.checked ? csv_figure(r.error.max_abs) : ""});
  }
  return csv.text();
}

}  // namespace

void register_tune(CLI::App& app, TuneArgs& args) {
  auto* cmd = app.add_subcommand("tune", "verify and time every candidate on the GPU; report the fastest");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--spec-file", args.spec_file,
                  "tune every problem of FILE: one spec or preset name a line, # comments (docs/cluster.md: \"Sweeps\")");
  cmd->add_option_function<std::string>(
         "--shard", [&args](const std::string& v) { args.shard = tune::parse_shard(v); },
         "I/N: this process's share (0 <= I < N): of --spec-file's problems, else of the problem's variants")
      ->check(shard_spec());
  cmd->add_option("--math", args.math, "tf32 (default, PyTorch's cuDNN default) | fp32 (strict IEEE products)")
      ->check(CLI::IsMember({"tf32", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--strategy", args.strategy,
                  "model (the default: guided by a cost model refined by what it measures) | exhaustive (every "
                  "variant; the default for --shard of one problem's variants) | random (--budget variants); "
                  "docs/commands.md: \"Search strategies\"")
      ->check(CLI::IsMember({"exhaustive", "random", "model"}));
  cmd->add_option("--seed", args.seed, "random: the draw; model: the order of equal predictions")
      ->check(integer_in(0, kMaxSeed))
      ->capture_default_str();
  cmd->add_option("--time-budget", args.time_budget_s, "model: stop measuring variants after SECONDS")
      ->check(seconds_up_to(kMaxTimeoutS));
  cmd->add_option("--budget", args.budget, "random: how many generated variants to run")
      ->check(integer_in(1, kMaxBudget));
  cmd->add_option("--jobs,-j", args.jobs, "parallel NVRTC compiles (default: all cores)")
      ->check(integer_in(1, kMaxJobs));
  auto* device = cmd->add_option("--device", args.device, "GPU ordinal")->check(integer_in(0, kMaxDevice))->capture_default_str();
  cmd->add_option_function<std::string>(
         "--devices", [&args](const std::string& v) { args.devices = parse_device_list(v); },
         "0,1,... or all: one worker per GPU, the solutions' first passes spread over them (docs/cluster.md: \"Several "
         "GPUs\")")
      ->check(device_list())
      ->excludes(device);
  add_output_args(cmd, args.out, "one row per variant");
  cmd->add_option("--timeout", args.timeout_s, "seconds a variant may run before it is recorded as a timeout")
      ->check(seconds_up_to(kMaxTimeoutS))
      ->capture_default_str();
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  cmd->add_flag("--force", args.force, "re-tune even when a winner is stored for this GPU and software");
  cmd->add_flag("--no-compile-cache", args.no_compile_cache,
                "compile every variant, even one compiled before (the cache is beside the database)");
  cmd->add_flag("-q,--quiet", args.quiet, "no progress on stderr (errors still go there)");
  cmd->add_flag("--all", args.all, "show every variant (and every failure's reason), not the ten fastest");
  cmd->add_option("--top-k", args.top_k, "variants re-verified when only driver/NVRTC/cuDNN versions changed")
      ->check(integer_in(1, kMaxTopK))
      ->capture_default_str();
}

namespace {

// TEST-ONLY: a worker that speaks the protocol without a GPU (tests/fake_worker.cpp), so this
// command's own outputs (table, --json, database writes) are tested on machines without one.
std::string worker_exe() {
  if (const char* test_worker = std::getenv("FUSETUNE_TEST_WORKER")) return test_worker;
  return tune::TuneOptions{}.worker_exe;
}

// The GPU that runs everything but the solutions' first passes: --device, or --devices' first.
int first_device(const TuneArgs& args) {
  if (!args.devices) return args.device;
  return args.devices->all ? 0 : args.devices->ordinals.front();
}

// The key of the device description kept between runs (tune/device_cache.hpp).
std::string device_key(const TuneArgs& args) {
  return tune::device_cache_key("/proc", first_device(args), worker_exe());
}

// One problem's tune, from the database's answer to the table (and, for a single problem, the
// --json/--csv documents). The exit code: 0 with a winner (stored or found), 1 without.
// dev_key: device_key(args), read once per run (a sweep's problems share it).
int tune_one(const spec::Problem& problem, const TuneArgs& args, db::Database& database, const std::string& db_path,
             const std::string& dev_key, const tune::Shard& variant_shard, bool documents, std::FILE* human) {
  tune::TuneOptions opt;
  opt.worker_exe = worker_exe();
  opt.math = *parse_math_mode(args.math);
  opt.device = first_device(args);
  if (args.devices) {
    opt.all_devices = args.devices->all;
    if (!args.devices->all) opt.more_devices.assign(args.devices->ordinals.begin() + 1, args.devices->ordinals.end());
  }
  opt.jobs = args.jobs;
  if (!args.no_compile_cache) opt.compile_cache_dir = tune::compile_cache_dir_for(db_path).string();
  opt.device_cache_key = dev_key;
  if (!opt.device_cache_key.empty()) opt.device_cache_dir = tune::device_cache_dir().string();
  opt.device_cache_read = !args.force;  // --force re-tunes: the worker describes the device
  opt.variant_timeout_s = args.timeout_s;
  opt.strategy = !args.strategy.empty()  ? tune::parse_strategy(args.strategy)
                 : variant_shard.count > 1 ? tune::Strategy::exhaustive
                                           : tune::Strategy::model;
  opt.budget = args.budget;
  opt.seed = uint64_t(args.seed);
  opt.time_budget_s = args.time_budget_s;
  opt.shard = variant_shard;
  if (const char* plant = std::getenv("FUSETUNE_TEST_PLANT")) opt.plant = plant;
  if (const char* trace = std::getenv("FUSETUNE_TRACE")) opt.trace_path = trace;
  Progress progress("tune", 0, args.quiet ? ProgressMode::quiet : ProgressMode::automatic);
  std::string last_phase;
  opt.progress = [&](const std::string& phase, size_t done, size_t total, const std::string& detail) {
    if (phase != last_phase) {
      progress.set_phase(phase, total);
      last_phase = phase;
    }
    if (done > 0) progress.step(detail);
  };

  // The database decides, once the device is known: a stored winner for this exact
  // environment answers at once; results from the same GPU under other driver/NVRTC/cuDNN
  // versions, or this environment's results without a winner (merged shards of its variants),
  // narrow the run to their top-k.
  db::Environment env;
  std::optional<db::WinnerRecord> stored;
  std::string narrowed;
  const std::string key = spec::problem_key(problem);
  opt.on_device = [&](const nlohmann::json& device) {
    narrowed.clear();  // asked again with the worker's description after a cached one
    env = tune::environment_from_device(device);
    tune::TuneDecision d;
    if (!args.force) {
      stored = database.winner(key, args.math, env.fingerprint());
      if (stored) {
        d.stop = true;
        return d;
      }
      // A shard measures its whole share: the top-k of what is stored is the final step's job.
      if (!variant_shard.whole()) return d;
      const auto top = database.top_results(key, args.math, env.hardware_fingerprint(), args.top_k);
      for (const auto& r : top) d.only.insert(r.variant_name);
      if (!d.only.empty())
        narrowed = top.front().env_fingerprint == env.fingerprint()
                       ? fmt::format("results of this GPU and software stored without a winner (merged shards, or an "
                                     "interrupted run): re-verifying and re-timing their top {}",
                                     d.only.size())
                       : fmt::format("same GPU under other driver/NVRTC/cuDNN versions: re-verifying and re-timing "
                                     "its top {}",
                                     d.only.size());
    }
    return d;
  };
  opt.on_batch = [&](const tune::TuneReport& rep, const std::vector<size_t>& batch) {
    std::vector<db::ResultRecord> records;
    for (size_t i : batch) records.push_back(tune::result_record(rep, i));
    database.write_results(env, records);  // one transaction per batch
  };

  const auto rep = tune::run_tune(problem, opt);
  // The driver's version from the device description: asking the driver again would cost a
  // stored answer its cuInit (0.24 s of 0.26 with --json on the H200, call 55).
  const std::string driver = rep.device.is_object() && rep.device.contains("driver") && rep.device["driver"].is_string()
                                 ? rep.device["driver"].get<std::string>()
                                 : "";
  nlohmann::json doc = documents ? json_document("tune", args.out, driver) : nlohmann::json();
  if (rep.stopped) {
    const auto& w = *stored;
    fmt::print(human,
               "problem  {}\nkey      {}\n\nstored winner for this GPU and software ({}, measured {}{}):\n"
               "  {} ({})  {:.3f} ms median  {:.2f}x vs unfused {:.3f} ms  {:.2f}x vs cudnn conv alone {:.3f} ms\n"
               "(fusetune tune --force re-tunes; fusetune query shows every result)\n",
               text::printable(w.canonical), text::printable(w.problem_key), text::printable(w.env.gpu_name),
               text::printable(w.created_at), w.shipped ? ", shipped" : "", text::printable(w.variant_name),
               text::printable(w.candidate), w.time_median_ms, w.speedup_vs_unfused(), w.unfused_median_ms,
               w.speedup_vs_cudnn(), w.cudnn_median_ms);
    if (!documents) return int(ExitCode::ok);
    // The stored winner, nothing re-measured: `results` is empty and `stored` true.
    doc.update({{"problem", w.canonical}, {"key", w.problem_key}, {"math", w.math}, {"stored", true},
                {"device_cached", rep.device_cached}, {"results", nlohmann::json::array()},
                {"winner", {{"name", w.variant_name}, {"candidate", w.candidate},
                            {"time_ms", {{"median", w.time_median_ms}}},
                            {"speedup_vs_unfused", measured_json(w.speedup_vs_unfused())},
                            {"speedup_vs_cudnn", measured_json(w.speedup_vs_cudnn())},
                            {"variant", nlohmann::json::parse(w.variant_json)}}}});
    write_outputs(args.out, doc, results_csv(rep));
    return int(ExitCode::ok);
  }
  if (!narrowed.empty()) fmt::print(human, "note: {}\n", narrowed);
  TuneTableOptions table;
  table.all = args.all;
  fmt::print(human, "{}", tune_table(rep, table));
  // A shard's best is the best of its share only: storing it as the problem's winner would make
  // the merge pick whichever shard finished last. The shards' results are merged, and a final
  // `tune` on one GPU re-times their top-k together and stores the winner.
  if (rep.winner && variant_shard.whole()) database.write_winner(tune::winner_record(rep, env));
  if (!variant_shard.whole())
    fmt::print(human, "{}",
               labelled_lines(fmt::format("shard    {} of the variants: no winner stored. After `fusetune db merge`, "
                                          "`fusetune tune` of this problem on the merged database re-times the "
                                          "shards' top {} (--top-k) on one GPU and stores the winner",
                                          variant_shard.text(), args.top_k),
                              TuneTableOptions{}.width));
  fmt::print(human, "database {}\n", db_path);
  if (documents) {
    doc.update(tune::report_to_json(rep));
    doc["stored"] = false;
    write_outputs(args.out, doc, results_csv(rep));
  }
  return rep.winner ? int(ExitCode::ok) : int(ExitCode::failure);
}

}  // namespace

int run_tune(const TuneArgs& args) {
  // The table is for people: on stderr when a document takes stdout (tune runs long, so it is
  // still shown), on stdout otherwise.
  std::FILE* human = args.out.human_on_stdout() ? stdout : stderr;
  // Input first (the whole list of a sweep), then the database (a bad file is exit 2), then the
  // GPU (exit 3): a mistake on line 40 of a sweep is found before the GPU is touched.
  const std::optional<tune::Shard>& shard = args.shard;
  std::vector<spec::ListedProblem> list;
  if (args.spec_file) {
    if (args.problem.spec || args.problem.preset)
      throw InputError("give a SPEC, --preset NAME or --spec-file FILE, not two of them");
    // A document describes one problem's run; a sweep's results are in the database.
    if (args.out.json || args.out.csv)
      throw InputError("--json and --csv describe one problem: a sweep's results are in the database "
                       "(fusetune query --json)");
    list = spec::parse_spec_list(read_input_file(*args.spec_file, "the spec file"), *args.spec_file);
  } else {
    list.push_back({0, spec::resolve_problem(args.problem.spec, args.problem.preset), 0});
  }
  // Every problem of a sweep is one the tuner takes, before anything starts (a line it has no
  // candidates for is named with its line number).
  for (const auto& p : list) {
    // A version-2 problem's float64 reference (GPU main-operator terms, CPU stages) has size limits.
    auto why = spec::why_not_tunable(p.problem);
    if (!why && !p.problem.is_conv2d_chain()) why = worker::why_no_model_reference(p.problem);
    if (why) {
      throw InputError(args.spec_file ? fmt::format("{}:{}: {}", text::printable(*args.spec_file), p.line, *why) : *why);
    }
  }
  // A sweep: this shard's problems, in file order; a problem listed twice is tuned once.
  std::vector<const spec::ListedProblem*> mine;
  size_t position = 0, unique = 0;
  for (const auto& p : list) {
    if (p.duplicate_of > 0) {
      fmt::print(stderr, "fusetune: note: {}:{}: the problem of line {} again: tuned once\n",
                 text::printable(*args.spec_file), p.line, p.duplicate_of);
      continue;
    }
    ++unique;
    if (!args.spec_file || !shard || shard->holds_position(position)) mine.push_back(&p);
    ++position;
  }
  const std::string db_path = args.db.empty() ? db::default_db_path() : args.db;
  check_output_args(args.out, db_path);
  // The compile cache is written beside the database: a database named like it is refused too.
  if (!args.no_compile_cache) refuse_database_output(tune::compile_cache_dir_for(db_path).string(), db_path);
  // Opened (created) even for a shard with nothing to do: the merge expects every shard's file.
  db::Database database = db::Database::open(db_path);
  // No driver or no GPU: one line and exit 3 before anything starts. Loading the driver costs
  // 0.2 s (cuInit; a stored answer's whole time on the H200, call 54), so it is skipped where a
  // device description kept in this boot (tune/device_cache.hpp) says a GPU answered; should it
  // have gone since, the worker reports that itself, with the same exit code.
  const std::string dev_key = device_key(args);
  std::string why;
  if (!mine.empty() && std::getenv("FUSETUNE_TEST_WORKER") == nullptr &&
      (args.force || !tune::load_cached_device(tune::device_cache_dir(), dev_key)) &&
      !gpu::driver_available(&why))
    throw NoGpuError(why);

  if (!args.spec_file) {
    return tune_one(list.front().problem, args, database, db_path, dev_key, shard.value_or(tune::Shard{}), true,
                    human);
  }

  const std::string share = shard ? fmt::format("shard {}: ", shard->text()) : std::string();
  fmt::print(human, "sweep    {}{} of the {} problems of {}\n", share, mine.size(), unique,
             text::printable(*args.spec_file));
  int code = int(ExitCode::ok);
  std::vector<std::string> failed;
  for (size_t k = 0; k < mine.size(); ++k) {
    fmt::print(human, "\n[{}/{}] {}:{}\n", k + 1, mine.size(), text::printable(*args.spec_file), mine[k]->line);
    std::fflush(human);
    // A problem without a verified winner is that problem's result: the sweep goes on.
    if (tune_one(mine[k]->problem, args, database, db_path, dev_key, tune::Shard{}, false, human) !=
        int(ExitCode::ok)) {
      code = int(ExitCode::failure);
      failed.push_back(fmt::format("line {}", mine[k]->line));
    }
  }
  fmt::print(human, "\nsweep    {}{} problem{} tuned, {} without a verified winner{}{}\n", share, mine.size(),
             mine.size() == 1 ? "" : "s", failed.size(), failed.empty() ? "" : ": ", fmt::join(failed, ", "));
  return code;
}

}  // namespace fusetune::cli
