#pragma once
// `tune` end to end: ask a worker for the device, generate and compile every variant, then
// verify and time each in the worker (replacing it when a variant kills it), re-time the
// finalists and the baselines interleaved, and pick the fastest verified variant.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/problem.hpp"
#include "tune/variant_result.hpp"

namespace fusetune::tune {

// What the caller decides once the device is known (e.g. from the tuning database).
struct TuneDecision {
  bool stop = false;           // a stored result answers the question: don't tune
  std::set<std::string> only;  // non-empty: run only these variants (plus the baselines)
};

struct TuneReport;

struct TuneOptions {
  std::string math = "tf32";      // tf32 | fp32
  int device = 0;
  unsigned jobs = 0;              // compile threads
  int finalists = 3;              // generated candidates re-timed against the baselines
  int retime_rounds = 15;
  double variant_timeout_s = 60;  // per request to the worker; a hang past it is `timeout`
  std::string worker_exe = "/proc/self/exe";
  std::string plant;              // test-only: planted variants (wrong|fault|hang), see codegen/planted
  int max_variants = 0;           // >0: an evenly spaced sample of each design's variants (tests)
  std::string strategy = "exhaustive";  // exhaustive | random (budget variants, seeded)
  int budget = 0;                 // random: how many generated variants to run (0: all)
  bool quick = false;             // few timing repetitions: for correctness runs, not for numbers
  std::function<void(const std::string& phase, size_t done, size_t total, const std::string& detail)> progress;
  // Called once with the worker's device description ({"name", "limits", "driver", ...}).
  std::function<TuneDecision(const nlohmann::json& device)> on_device;
  // Called with indices into report.results as they are measured (batches of ~16), and once
  // more with the finalists after their interleaved re-timing: persist them as they come.
  std::function<void(const TuneReport& report, const std::vector<size_t>& batch)> on_batch;
  // Already-compiled variants (e.g. a stored winner with its CUBIN) run alongside the generated ones.
  std::vector<VariantResult> injected;
};

struct TuneReport {
  std::string problem;  // canonical
  std::string key;
  std::string math;
  nlohmann::json device;      // name, arch, limits, driver
  double copy_gbps = 0;       // measured in this run
  std::vector<VariantResult> results;
  std::optional<size_t> winner;         // index into results
  std::optional<size_t> unfused;        // the baseline
  std::optional<size_t> cudnn;          // the fastest conv-alone floor
  nlohmann::json conv_names;            // layout -> chosen cuDNN algorithm
  int worker_restarts = 0;
  bool stopped = false;                 // on_device said a stored result answers it
};

TuneReport run_tune(const spec::Problem& problem, const TuneOptions& options);

// Ratio helpers used by the table, JSON and database (0 when not measurable).
double speedup(const TuneReport& r, size_t baseline_index, size_t i);

}  // namespace fusetune::tune
