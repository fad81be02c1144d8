#pragma once
// `tune` end to end, in named phases (tune/tuner.cpp):
//   device     a worker process reads the GPU; the caller may answer from the database. The
//              worker's session setup is asked for right after, and runs while we go on
//   generate   every variant of every candidate for this device (or a sample of them)
//   compile    NVRTC on all cores: the floors and baselines now, the solutions in the
//              background (compile_queue.hpp)
//   baselines  the floors (conv alone) and `unfused` verified and given a first pass: the conv
//              time per layout that the solutions' first passes are ranked with
//   engines    each cudnn-fused template becomes one variant per cuDNN engine configuration
//              the worker lists (and builds, unless the guided search builds them as it runs them)
//   measure    every other variant (the guided search: those it picks) verified on every draw,
//              then timed on its own, on every GPU of `--devices` at once (tune/fleet/);
//              `unfused`'s and the floor's confirmation runs first on the first GPU when
//              solutions are still compiling
//   finalists  per design, the best by its own kernels' time plus the shared conv's; re-timed
//              interleaved with the baselines; the fastest is the winner
//   confirm    winner, runner-up, `unfused` and the fastest floor timed sustained, the winner
//              and the runner-up taking turns, the others each alone: the figures reported and stored
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "spec/problem.hpp"
#include "protocol/protocol.hpp"
#include "tune/search/strategy.hpp"
#include "tune/shard.hpp"
#include "tune/tie_break.hpp"
#include "protocol/variant_result.hpp"

namespace fusetune::tune {

// What the caller decides once the device is known (e.g. from the tuning database).
struct TuneDecision {
  bool stop = false;           // a stored result answers the question: don't tune
  std::set<std::string> only;  // non-empty: run only these variants (plus the baselines)
};

struct TuneReport;

struct TuneOptions {
  MathMode math = MathMode::tf32;
  int device = 0;  // the first GPU: it runs everything but the solutions' first passes
  // More GPUs of this host (`--devices`), each with a worker of its own: the solutions' first
  // passes (verification and a first timing) are spread over `device` and these; the finalist
  // and confirmation rounds, whose figures are compared with each other, run on `device` alone.
  // Every GPU must be of the same kind as `device`. A GPU listed twice gets two workers (the
  // GPU tests run the several-GPU path on one); the CLI refuses that.
  std::vector<int> more_devices;
  bool all_devices = false;  // --devices all: every GPU the driver lists, `device` first
  unsigned jobs = 0;              // compile threads
  std::string compile_cache_dir;  // NVRTC results kept between runs (compile_cache.hpp); empty: none
  int finalists = 2;              // per design, re-timed against the baselines
  int retime_rounds = 15;         // interleaved rounds of the finalist and confirmation phases
  double variant_timeout_s = 60;  // per request to the worker; a hang past it is `timeout`
  std::string worker_exe = "/proc/self/exe";
  // The worker's device description kept between runs (device_cache.hpp): with an entry for
  // device_cache_key that on_device answers with a stored result, no worker is started. Empty
  // dir or key: no cache.
  std::string device_cache_dir;
  std::string device_cache_key;
  bool device_cache_read = true;  // false (tune --force): the worker describes the device, and
                                  // its description is still kept for the next run
  std::string plant;              // test-only: planted variants, see codegen/planted.hpp
  std::string trace_path;         // FUSETUNE_TRACE: a timeline of the tune appended here (trace.hpp)
  int max_variants = 0;           // >0: an evenly spaced sample of each design's variants, and
                                  // the first this many cuDNN engine configurations (tests)
  Strategy strategy = Strategy::exhaustive;  // exhaustive | random (budget variants, seeded) | model
                                  // (tune/guided_search.hpp: a cost model refined by what it measures)
  int budget = 0;                 // random: how many generated variants to run (0: all)
  uint64_t seed = 0;              // random and model: the draw / the order of equal predictions
  double time_budget_s = 0;       // model: stop measuring solutions after this many seconds (0: none)
  bool quick = false;             // a short first pass (3-5 samples): for correctness runs and re-checks
                                  // whose figures come from the interleaved rounds (smoke)
  bool floors = true;             // also run the conv-alone floors (smoke compares with unfused only)
  // --shard I/N of one problem: only the solution variants this shard holds (tune/shard.hpp),
  // with every baseline and floor. Its winner is this share's best, not the problem's.
  Shard shard;
  std::function<void(const std::string& phase, size_t done, size_t total, const std::string& detail)> progress;
  // Called once with the worker's device description ({"name", "limits", "driver", ...}).
  std::function<TuneDecision(const nlohmann::json& device)> on_device;
  // Called with indices into report.results as they are measured (batches of ~16), and once
  // more after each interleaved round with the variants it re-timed: persist them as they come.
  std::function<void(const TuneReport& report, const std::vector<size_t>& batch)> on_batch;
  // Already-compiled variants (e.g. a stored winner with its CUBIN) run alongside the generated ones.
  std::vector<protocol::VariantResult> injected;
  // cuDNN's algorithm per conv layout to use instead of searching (a stored winner's, so a
  // re-check runs the configuration that was tuned).
  protocol::ConvChoices conv_choices;
  protocol::InputRange inputs = protocol::InputRange::uniform;  // test-only: how the worker draws x (protocol.hpp)
};

struct TuneReport {
  std::string problem;  // canonical
  std::string key;
  MathMode math = MathMode::tf32;
  nlohmann::json device;      // name, arch, limits, driver
  double copy_gbps = 0;       // measured in this run
  std::vector<protocol::VariantResult> results;
  std::optional<size_t> winner;     // index into results: the fastest verified complete pipeline
  std::optional<size_t> runner_up;  // the next one, in the confirmation round too
  TieDecision tie;                  // winner and runner-up within the measured noise (tie_break.hpp)
  std::optional<size_t> unfused;    // the baseline (the faster of eager's conv paths)
  std::optional<size_t> cudnn;      // the fastest conv-alone floor
  std::map<std::string, std::vector<std::string>> conv_names;  // variant -> cuDNN algorithm per conv step
  std::vector<std::string> notes;   // e.g. cuDNN algorithms that failed verification
  protocol::ConvChoices conv_choices;         // cuDNN's algorithm per conv layout, as chosen (and verified) in this run
  std::vector<std::pair<std::string, double>> phase_seconds;  // in order
  int confirm_rounds = 0;
  int worker_restarts = 0;
  bool stopped = false;             // on_device said a stored result answers it
  bool device_cached = false;       // ...from the cached device description, without a worker
  Shard shard;                      // the share of the variants this run measured (whole: all)
  std::vector<int> devices;         // the GPUs that measured, by ordinal; the first ran the rounds
};

TuneReport run_tune(const spec::Problem& problem, const TuneOptions& options);

// Ratio helpers used by the table, JSON and database (0 when not measurable).
double speedup(const TuneReport& r, size_t baseline_index, size_t i);

}  // namespace fusetune::tune
