#include "tune/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "codegen/candidates.hpp"
#include "codegen/cudnn_engine.hpp"
#include "codegen/generate.hpp"
#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "tune/device_cache.hpp"
#include "tune/fleet/worker_fleet.hpp"
#include "tune/rounds/confirm.hpp"
#include "tune/rounds/early_confirmation.hpp"
#include "tune/rounds/finalists.hpp"
#include "tune/run/compile_stage.hpp"
#include "tune/run/engine_expansion.hpp"
#include "tune/run/measurer.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"
#include "tune/search/searcher.hpp"
#include "tune/trace.hpp"

namespace fusetune::tune {

namespace {

using codegen::Role;

// Evenly spaced variants of each design, the first and last always among them: the extremes
// of each parameter range get run. Planted test variants are all kept: each is a bug to catch.
std::vector<codegen::Variant> sample_variants(std::vector<codegen::Variant> all, int per_design) {
  if (per_design <= 0) return all;
  std::vector<codegen::Variant> out;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].design == all[i].design) ++j;
    const size_t n = j - i;
    const size_t keep = all[i].design.ends_with(".planted") ? n : std::min(n, size_t(per_design));
    for (size_t t = 0; t < keep; ++t) out.push_back(all[i + (keep == 1 ? 0 : t * (n - 1) / (keep - 1))]);
    i = j;
  }
  return out;
}

// A cudnn-fused template: its configurations, which are what shards split and what
// TuneDecision::only names, exist only once the worker lists them (engine expansion).
bool engines_later(const codegen::Variant& v) {
  return codegen::engines_at_run_time(v) && !codegen::engine_of(v);
}

// The phase driver: the phases in order, each handing its work to the piece that owns the state
// it needs (the workers, the rows and compiles, the measuring, the rounds, the search).
class TuneRun {
 public:
  TuneRun(const spec::Problem& problem, const TuneOptions& opt)
      : opt_(opt), trace_(opt.trace_path), ctx_{problem, opt, trace_, rep_}, searcher_(make_searcher(opt)),
        fleet_(ctx_, setup_request(problem, opt, *searcher_)) {
    rep_.problem = spec::canonical(problem);
    rep_.key = spec::problem_key(problem);
    rep_.math = opt.math;
    rep_.shard = opt.shard;
  }

  TuneReport run() {
    const auto t0 = Clock::now();
    trace_(fmt::format("tune of {} begins (times from here)", rep_.problem));
    if (answered_from_cached_device()) {
      trace_("answered from the cached device description and the database: no worker started");
      rep_.phase_seconds.emplace_back("device", std::chrono::duration<double>(Clock::now() - t0).count());
      rep_.stopped = true;
      return std::move(rep_);
    }
    fleet_.start_first();
    if (!phase("device", [&] { return device(); })) {
      fleet_.quit();
      rep_.stopped = true;
      return std::move(rep_);
    }
    fleet_.send_setup();
    phase("generate", [&] { return generate(); });
    phase("compile", [&] { return compile(); });
    phase("baselines", [&] { return baselines(); });
    phase("engines", [&] { return engines(); });
    phase("measure", [&] { return measure(); });
    measurer_->flush(true);
    phase("finalists", [&] { return finalists(); });
    phase("confirm", [&] { return confirm(); });
    rep_.worker_restarts += fleet_.restarts();
    rep_.conv_choices = fleet_.conv_choices();
    fleet_.quit();
    // The compile phase's figure is the time spent waiting for compiles: the head's, plus
    // whatever the background did not hide.
    for (auto& [name, sec] : rep_.phase_seconds)
      if (name == "compile") sec += compile_->waited_s();
    rep_.results = rows_.take_results();
    return std::move(rep_);
  }

 private:
  static protocol::SetupRequest setup_request(const spec::Problem& problem, const TuneOptions& opt,
                                              const Searcher& searcher) {
    protocol::SetupRequest s;
    s.problem = spec::canonical(problem);
    s.math = opt.math;
    s.device = opt.device;
    s.conv_choices = opt.conv_choices;
    s.conv_graph_head = searcher.conv_graph_head();
    s.inputs = opt.inputs;
    return s;
  }

  // Runs one phase and records its wall time.
  bool phase(const char* name, const std::function<bool()>& fn) {
    const auto t0 = Clock::now();
    trace_(fmt::format("phase {} begins", name));
    const bool go_on = fn();
    rep_.phase_seconds.emplace_back(name, std::chrono::duration<double>(Clock::now() - t0).count());
    trace_(fmt::format("phase {} ends", name));
    return go_on;
  }

  // --- device ---------------------------------------------------------------------------
  // A stored answer from the cached device description, without starting a worker.
  bool answered_from_cached_device() {
    if (!opt_.on_device || !opt_.device_cache_read) return false;
    auto dev = load_cached_device(opt_.device_cache_dir, opt_.device_cache_key);
    if (!dev) return false;
    TuneDecision d;
    try {
      d = opt_.on_device(*dev);
    } catch (const std::exception&) {
      return false;  // a description the caller cannot read: the worker's answer decides
    }
    if (!d.stop) return false;
    decision_ = d;
    rep_.device = std::move(*dev);
    rep_.device_cached = true;
    return true;
  }

  // The worker reads the GPU; the caller may answer from the database. With more GPUs, their
  // workers start now, asked at once for their descriptions and sessions.
  bool device() {
    ctx_.progress("device", 0, 1, "");
    auto [dev, reply] = fleet_.describe_first();
    limits_ = reply.limits;
    if (!opt_.device_cache_key.empty() && load_cached_device(opt_.device_cache_dir, opt_.device_cache_key) != dev)
      store_cached_device(opt_.device_cache_dir, opt_.device_cache_key, dev);
    rep_.device = dev;
    if (opt_.on_device) decision_ = opt_.on_device(dev);
    if (!decision_.stop) fleet_.start_more();
    return !decision_.stop;
  }

  // --- generate -------------------------------------------------------------------------
  bool generate() {
    codegen::GenerateOptions gen;
    gen.problem_text = rep_.problem;
    gen.plant = opt_.plant;
    gen.strict_fp32 = opt_.math == MathMode::fp32;
    variants_ = sample_variants(codegen::generate_variants(ctx_.problem, limits_, gen), opt_.max_variants);
    variants_ = searcher_->choose(std::move(variants_));
    if (!opt_.floors) std::erase_if(variants_, [](const codegen::Variant& v) { return v.role() == Role::floor; });
    if (!decision_.only.empty()) {
      std::erase_if(variants_, [&](const codegen::Variant& v) { return v.role() == Role::solution && !wanted(v); });
    }
    // A cudnn-fused template stays in every shard (engines_later()).
    std::erase_if(variants_, [&](const codegen::Variant& v) {
      return v.role() == Role::solution && !engines_later(v) && !opt_.shard.holds_name(v.name);
    });
    return true;
  }

  // Under decision_.only: the variant is named there, or it is a cudnn-fused template one of
  // whose configurations is.
  bool wanted(const codegen::Variant& v) const {
    if (decision_.only.count(v.name) != 0) return true;
    if (!engines_later(v)) return false;
    return std::any_of(decision_.only.begin(), decision_.only.end(),
                       [&](const std::string& n) { return n.starts_with(v.name + "."); });
  }

  // --- compile --------------------------------------------------------------------------
  // The floors and baselines now; the solutions in the background while the baselines phase
  // runs (the worker's input draws and float64 references, cuDNN's conv choices).
  bool compile() {
    compile_.emplace(ctx_, limits_);
    early_.emplace(ctx_, fleet_, rows_, searcher_->measures_while_compiling());
    measurer_.emplace(ctx_, limits_, rows_, fleet_, *compile_, *early_);
    fleet_.on_first_session([this](const protocol::SetupReply& sr) {
      rep_.copy_gbps = sr.copy_gbps;
      searcher_->priors_changed(*measurer_);
    });
    compile_->compile_head(rows_, variants_);
    fleet_.check_lanes();  // a GPU that is missing or of another kind stops the run before more compiles
    // Nothing measured yet: a nominal copy rate and the conv at its floor.
    compile_->start_solutions(measurer_->cost_inputs());
    searcher_->priors_changed(*measurer_);
    return true;
  }

  // --- baselines ------------------------------------------------------------------------
  // The floors and baselines' first pass. Their interleaved figures come from the finalist round
  // (and the confirmation), beside the solutions; a round of their own here cost a cold tune
  // about 1.3 s (1 s of heat and 15 rounds of four plans; kernelbench-31 on the H200, call 56).
  bool baselines() {
    measurer_->measure_all(Role::floor);
    measurer_->measure_all(Role::baseline);
    measurer_->learn_conv();
    searcher_->priors_changed(*measurer_);
    return true;
  }

  // --- engines --------------------------------------------------------------------------
  // A search that waits for the whole space confirms the baselines first (the GPU would idle
  // through the compile), then takes every compile; each cudnn-fused template becomes its
  // configurations (built now, or as the search runs them).
  bool engines() {
    const bool while_compiling = searcher_->measures_while_compiling();
    if (!while_compiling) measurer_->confirm_early_now();
    compile_->join(rows_, !while_compiling);
    expand_engines(ctx_, fleet_, rows_, decision_, !while_compiling);
    return true;
  }

  bool measure() {
    searcher_->measure(*measurer_);
    return true;
  }

  bool finalists() {
    finalist_round(*measurer_);
    return true;
  }

  bool confirm() {
    confirmation_round(*measurer_);
    return true;
  }

  const TuneOptions& opt_;
  TuneTrace trace_;
  TuneReport rep_;
  RunContext ctx_;
  std::unique_ptr<Searcher> searcher_;
  WorkerFleet fleet_;
  gpu::DeviceLimits limits_;
  TuneDecision decision_;
  std::vector<codegen::Variant> variants_;
  Rows rows_;
  std::optional<CompileStage> compile_;
  std::optional<EarlyConfirmation> early_;
  std::optional<Measurer> measurer_;
};

}  // namespace

double speedup(const TuneReport& r, size_t baseline_index, size_t i) {
  const auto& b = r.results[baseline_index];
  const auto& x = r.results[i];
  if (!b.timed || !x.timed || x.time.median_ms <= 0) return 0.0;
  return b.time.median_ms / x.time.median_ms;
}

TuneReport run_tune(const spec::Problem& problem, const TuneOptions& options) {
  TuneRun run(problem, options);
  return run.run();
}

}  // namespace fusetune::tune
