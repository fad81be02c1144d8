#include "tune/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <fstream>
#include <numeric>
#include <limits>
#include <memory>
#include <mutex>
#include <random>

#include "codegen/cudnn_engine.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "tune/compile_all.hpp"
#include "tune/compile_queue.hpp"
#include "tune/cost_model.hpp"
#include "tune/device_cache.hpp"
#include "tune/guided_search.hpp"
#include "protocol/limits_json.hpp"
#include "protocol/protocol.hpp"
#include "common/temp_dir.hpp"
#include "tune/worker_client.hpp"
#include "tune/trace.hpp"
#include "tune/worker_lanes.hpp"

namespace fusetune::tune {

namespace {

using ms = std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
// Finalists per design beyond TuneOptions::finalists: those within this of the best (finalists()).
constexpr double kFinalistMargin = 0.10;
// A design whose first-pass best is this far behind the best of all sends one finalist: sustained
// load slowed the heaviest kernels by up to 10% against short bursts (call 38), so 25% cannot flip.
constexpr double kOutOfReach = 0.25;
constexpr int kMaxFinalists = 6;
constexpr int kConvGraphHead = 8;  // graph configurations of the conv alone timed by `model`
using codegen::Role;

ms seconds(double s) { return ms(int64_t(s * 1000)); }

// Throws NoGpuError / Error when the worker reports an error for a request that must work.
void check_reply(const nlohmann::json& reply, const std::string& what) {
  if (!reply.contains("error")) return;
  const int code = reply.value("exit_code", 1);
  const std::string msg = fmt::format("{}: {}", what, reply["error"].get<std::string>());
  if (code == int(ExitCode::no_gpu)) throw NoGpuError(reply["error"].get<std::string>());
  throw Error(ExitCode(code), msg);
}

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

// `--strategy random --budget N`: N solution variants drawn with a fixed seed (so a re-run
// draws the same ones), plus every baseline and floor.
std::vector<codegen::Variant> random_subset(std::vector<codegen::Variant> all, size_t budget, uint64_t seed) {
  std::vector<codegen::Variant> out, pool;
  for (auto& v : all) (v.role() == Role::solution ? pool : out).push_back(std::move(v));
  std::mt19937_64 rng(20261129 ^ seed);
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(std::min(budget, pool.size()));
  for (auto& v : pool) out.push_back(std::move(v));
  return out;
}

class TuneRun {
 public:
  TuneRun(const spec::Problem& problem, const TuneOptions& opt) : problem_(problem), opt_(opt) {
    rep_.problem = spec::canonical(problem);
    rep_.key = spec::problem_key(problem);
    rep_.math = opt.math;
    rep_.shard = opt.shard;
    setup_.problem = rep_.problem;
    setup_.math = opt.math;
    setup_.device = opt.device;
    setup_.conv_choices = opt.conv_choices;
    // The guided search times cuDNN's conv on the first kConvGraphHead graph configurations
    // (conv_cache.hpp says why); the other strategies keep all of them.
    setup_.conv_graph_head = opt.strategy == "model" ? kConvGraphHead : 0;
    setup_.inputs = opt.inputs;
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
    lanes_.push_back(Lane{opt_.device, make_worker()});
    if (!phase("device", [&] { return device(); })) {
      quit();
      rep_.stopped = true;
      return std::move(rep_);
    }
    send_setup();
    phase("generate", [&] { return generate(); });
    phase("compile", [&] { return compile(); });
    phase("baselines", [&] { return baselines(); });
    phase("engines", [&] { return engines(); });
    phase("measure", [&] { return measure(); });
    flush(true);
    phase("finalists", [&] { return finalists(); });
    phase("confirm", [&] { return confirm(); });
    for (const Lane& lane : lanes_) rep_.worker_restarts += lane.worker->restarts();
    rep_.conv_choices = setup_.conv_choices;
    quit();
    return std::move(rep_);
  }

 private:
  // Runs one phase and records its wall time.
  bool phase(const char* name, const std::function<bool()>& fn) {
    const auto t0 = Clock::now();
    trace_(fmt::format("phase {} begins", name));
    const bool go_on = fn();
    rep_.phase_seconds.emplace_back(name, std::chrono::duration<double>(Clock::now() - t0).count());
    trace_(fmt::format("phase {} ends", name));
    return go_on;
  }

  void progress(const std::string& what, size_t done, size_t total, const std::string& detail) {
    if (opt_.progress) opt_.progress(what, done, total, detail);
  }

  std::unique_ptr<WorkerClient> make_worker() const {
    return std::make_unique<WorkerClient>(std::vector<std::string>{opt_.worker_exe, "__worker"});
  }

  void quit() {
    for (Lane& lane : lanes_) lane.worker->quit(seconds(10));
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

  bool device() {
    progress("device", 0, 1, "");
    nlohmann::json dev;
    try {
      dev = lanes_[0].worker->request({{"cmd", "device"}, {"device", opt_.device}}, seconds(120));
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker failed to start: {}", e.reason));
    }
    check_reply(dev, "device");
    limits_ = protocol::limits_from_json(dev.at("limits"));
    if (!opt_.device_cache_key.empty() && load_cached_device(opt_.device_cache_dir, opt_.device_cache_key) != dev)
      store_cached_device(opt_.device_cache_dir, opt_.device_cache_key, dev);
    rep_.device = dev;
    if (opt_.on_device) decision_ = opt_.on_device(dev);
    if (!decision_.stop) start_more_lanes(dev);
    return !decision_.stop;
  }

  // --- more GPUs ------------------------------------------------------------------------
  // A worker per further GPU, asked at once for its description and its session, so both are
  // ready by the time the solutions are measured (ready_lanes() reads the answers).
  void start_more_lanes(const nlohmann::json& dev) {
    std::vector<int> more = opt_.more_devices;
    if (opt_.all_devices) {
      more.clear();
      for (int d = 0; d < dev.value("count", 1); ++d)
        if (d != opt_.device) more.push_back(d);
    }
    for (int d : more) {
      Lane lane{d, make_worker(), false};
      try {
        lane.worker->send({{"cmd", "device"}, {"device", d}});
        lane.worker->send(to_json(setup_for(d)));
        lane.setup_sent = true;
        trace_(fmt::format("setup asked of GPU {}'s worker", d));
      } catch (const WorkerLost& e) {
        throw Error(ExitCode::failure, fmt::format("GPU worker for device {} failed to start: {}", d, e.reason));
      }
      lanes_.push_back(std::move(lane));
    }
    for (const Lane& lane : lanes_) rep_.devices.push_back(lane.device);
    runner_ = std::make_unique<LaneRunner>(lanes_.size());
    running_.assign(lanes_.size(), 0);
  }

  // Reads the further GPUs' descriptions (asked for with the device phase; by the end of the
  // compile phase they are in). Each must be the first GPU's kind: the CUBINs are compiled for
  // its architecture, and the first passes of all GPUs are ranked together.
  void check_lanes() {
    for (size_t l = 1; l < lanes_.size(); ++l) {
      Lane& lane = lanes_[l];
      if (!lane.described) {
        nlohmann::json dev;
        try {
          dev = lane.worker->receive(seconds(120));
        } catch (const WorkerLost& e) {
          throw Error(ExitCode::failure, fmt::format("GPU worker for device {} failed to start: {}", lane.device, e.reason));
        }
        check_reply(dev, fmt::format("device {}", lane.device));
        lane.described = true;
        const gpu::DeviceLimits limits = protocol::limits_from_json(dev.at("limits"));
        if (dev.value("name", std::string()) != rep_.device.value("name", std::string()) ||
            limits.arch_flag() != limits_.arch_flag() || limits.sm_count != limits_.sm_count)
          throw Error(ExitCode::bad_input,
                      fmt::format("--devices: GPU {} is a {} ({}, {} SMs) and GPU {} a {} ({}, {} SMs): one tune "
                                  "measures one kind of GPU",
                                  lane.device, dev.value("name", std::string("?")), limits.arch_flag(), limits.sm_count,
                                  lanes_[0].device, rep_.device.value("name", std::string("?")), limits_.arch_flag(),
                                  limits_.sm_count));
      }
    }
  }

  // The first `width` lanes with their sessions.
  void ready_lanes(size_t width) {
    check_lanes();
    for (size_t l = 1; l < std::min(width, lanes_.size()); ++l)
      if (!lanes_[l].session) start_session(l);
  }

  protocol::SetupRequest setup_for(int device) const {
    protocol::SetupRequest s = setup_;
    s.device = device;
    return s;
  }

  // --- generate and compile -------------------------------------------------------------
  bool generate() {
    codegen::GenerateOptions gen;
    gen.problem_text = rep_.problem;
    gen.plant = opt_.plant;
    gen.strict_fp32 = opt_.math == MathMode::fp32;
    variants_ = sample_variants(codegen::generate_variants(problem_, limits_, gen), opt_.max_variants);
    if (opt_.strategy == "random" && opt_.budget > 0) variants_ = random_subset(std::move(variants_), size_t(opt_.budget), opt_.seed);
    if (!opt_.floors) std::erase_if(variants_, [](const codegen::Variant& v) { return v.role() == Role::floor; });
    if (!decision_.only.empty()) {
      std::erase_if(variants_, [&](const codegen::Variant& v) { return v.role() == Role::solution && !wanted(v); });
    }
    // A cudnn-fused template stays in every shard: its configurations, which are what the
    // shards split, exist only once the worker lists them (engines()).
    std::erase_if(variants_, [&](const codegen::Variant& v) {
      return v.role() == Role::solution && !in_shard_later(v) && !opt_.shard.holds_name(v.name);
    });
    return true;
  }

  static bool in_shard_later(const codegen::Variant& v) {
    return v.candidate == codegen::Candidate::cudnn_fused && !codegen::engine_of(v);
  }

  // Under decision_.only: the variant is named there, or it is a cudnn-fused template one of
  // whose configurations is (the configurations exist only once the worker lists them).
  bool wanted(const codegen::Variant& v) const {
    if (decision_.only.count(v.name) != 0) return true;
    if (v.candidate != codegen::Candidate::cudnn_fused || codegen::engine_of(v)) return false;
    return std::any_of(decision_.only.begin(), decision_.only.end(),
                       [&](const std::string& n) { return n.starts_with(v.name + "."); });
  }

  // The floors and baselines compile first (a few kernels); the solutions compile in the
  // background (compile_queue.hpp) while the baselines phase runs (the worker's input draws and
  // float64 references, cuDNN's conv choices), most promising first by the cost model. The
  // exhaustive and random strategies wait for all of them before measuring (engines()); the
  // guided search takes each variant it picks as soon as it is compiled, and the pool stops
  // when the search does. The "compile" phase's figure is the time spent waiting for compiles:
  // the head's, plus whatever the background did not hide.
  bool compile() {
    CompileAllOptions copts;
    copts.arch = limits_.arch_flag();
    copts.strict_fp32 = opt_.math == MathMode::fp32;
    copts.jobs = opt_.jobs;
    copts.cache_dir = opt_.compile_cache_dir;
    std::vector<codegen::Variant> head, tail;
    std::vector<size_t> head_idx;
    for (size_t i = 0; i < variants_.size(); ++i) {
      if (variants_[i].role() == Role::solution) {
        tail.push_back(variants_[i]);
      } else {
        head.push_back(variants_[i]);
        head_idx.push_back(i);
      }
    }
    // Until the background compile lands, a solution's row says so (nothing reads it before).
    rep_.results.assign(variants_.size(), protocol::VariantResult{});
    for (size_t i = 0; i < variants_.size(); ++i) {
      rep_.results[i].variant = variants_[i];
      rep_.results[i].status = protocol::Status::compile_failed;
      rep_.results[i].reason = "not compiled yet";
    }
    cubin_paths_.assign(variants_.size(), std::string());
    auto counted = std::make_shared<std::atomic<size_t>>(0);
    auto report = [this, counted, total = variants_.size()](const protocol::VariantResult& r) {
      const size_t done = ++*counted;
      const std::lock_guard<std::mutex> lock(progress_mutex_);
      progress("compiling", done, total, r.variant.name);
    };
    copts.on_done = report;
    const std::vector<protocol::VariantResult> head_results = compile_all(head, limits_, copts);
    for (size_t j = 0; j < head.size(); ++j) place(head_idx[j], head_results[j]);
    check_lanes();  // a GPU that is missing or of another kind stops the run before more compiles
    // The solutions' progress stays quiet: the baselines' own lines run meanwhile. The trace
    // gets each solution's compile with its duration, so a trace shows whether the pool was
    // compiling what the search waited for (its start is the line's time less the duration).
    // The line is written just before the result is filed, so a "waiting for the compile of"
    // the same variant may follow it, answered at once by "compile in".
    copts.on_done = nullptr;
    if (trace_.on())
      copts.on_done = [this](const protocol::VariantResult& r) {
        if (r.variant.source.empty()) return;  // a cuDNN graph template: nothing was compiled
        trace_(fmt::format("compiled {} ({:.0f} ms{}{})", r.variant.name, r.compile.compile_ms,
                           r.compile.from_cache ? ", cached" : "",
                           r.status == protocol::Status::ok ? std::string() : ", " + std::string(protocol::status_name(r.status))));
      };
    // Most promising first: the cost model's prior before compiling (registers unknown) and, as
    // nothing is measured yet, a nominal copy rate and the conv at its floor; only the order
    // depends on it.
    const CostInputs in = cost_inputs();
    std::vector<double> prior(tail.size());
    for (size_t j = 0; j < tail.size(); ++j) prior[j] = prior_ms(problem_, tail[j], -1, in);
    std::vector<size_t> order(tail.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prior[a] < prior[b]; });
    for (size_t j = 0; j < tail.size(); ++j) tail_slot_[tail[j].name] = j;
    queue_ = std::make_unique<CompileQueue>(std::move(tail), std::move(order), limits_, copts);
    prefer_by_priors();  // the guided search's first picks (each design's probe) before the priors' order
    return true;
  }

  // What the cost model knows now: the copy rate once the worker's setup measured it, the conv
  // alone once the baselines did (before, prior_ms counts a conv step at its FLOP floor).
  CostInputs cost_inputs() const {
    CostInputs in;
    in.dev = limits_;
    in.copy_gbps = rep_.copy_gbps;
    in.tensor_tflops = opt_.math == MathMode::fp32 ? 51 : 495;
    in.conv_ms = conv_ms_;
    return in;
  }

  // The solutions the guided search chooses among (indices into rep_.results, into `idx`),
  // with their priors from cost_inputs(): those compiling and those compiled without a failure.
  std::vector<SearchItem> search_items(std::vector<size_t>& idx) const {
    const CostInputs in = cost_inputs();
    std::vector<SearchItem> items;
    idx.clear();
    for (size_t i = 0; i < rep_.results.size(); ++i) {
      const auto& r = rep_.results[i];
      if (r.variant.role() != Role::solution) continue;
      const bool compiling = tail_slot_.count(r.variant.name) != 0;
      if (!compiling && r.status != protocol::Status::ok) continue;
      idx.push_back(i);
      // Registers unknown for every variant (most are not compiled yet): the search's order
      // must not depend on which compiles happened to finish first (--seed reproduces it).
      items.push_back({r.variant.name, r.variant.design, r.variant.params, prior_ms(problem_, r.variant, -1, in)});
    }
    return items;
  }

  // Before the search starts, the pool compiles the lookahead of a search made from the priors
  // as known now; called again as the setup and the baselines bring the copy rate and the conv's
  // time, so that by the first pick the pool has mostly been compiling what the search will pick
  // (the priors from the nominal rate and no conv probed another fused-conv variant than the
  // search did, and the pool spent #31's first 3 s on what the search never measured: call 95).
  // Mostly: the search then holds cuDNN's engine configurations where this one holds their
  // templates (listed later, by engines()). Once the search runs, its own lookahead leads the
  // pool: a worker set up again (after a fault) must not put the priors' back.
  void prefer_by_priors() {
    if (!queue_ || opt_.strategy != "model" || search_started_) return;
    std::vector<size_t> idx;
    std::vector<SearchItem> items = search_items(idx);
    if (items.empty()) return;
    GuidedOptions go;
    go.seed = opt_.seed;
    prefer_next(GuidedSearch(std::move(items), go), [&](size_t j) {
      const auto it = tail_slot_.find(rep_.results[idx[j]].variant.name);
      return it == tail_slot_.end() ? std::string::npos : it->second;
    });
  }

  // The pool compiles first what the guided search will most likely ask for next: its lookahead,
  // the picks it would make if every answer came back as it expects (twice the pool's width: the
  // picks move as the search learns). In the simulation of tests/guided_search_test.cpp the
  // ranking's head cut the compile waits over the recorded landscapes by a fifth, the lookahead
  // by a third more (208.9 -> 163.8 -> 106.4 s over the 114 landscapes recorded before call 95;
  // 253.5 -> 186.8 -> 121.6 while a conv step the baselines had not timed counted 0 in the
  // priors). `slot_of`: an item's slot in the queue, or npos.
  void prefer_next(const GuidedSearch& search, const std::function<size_t(size_t)>& slot_of) {
    if (!queue_) return;
    const size_t width = 2 * std::max<size_t>(1, queue_->threads());
    std::vector<size_t> first;
    for (size_t j : search.lookahead(width)) {  // its picks, then the rest of its ranking
      if (first.size() >= width) break;
      if (const size_t slot = slot_of(j); slot != std::string::npos) first.push_back(slot);
    }
    queue_->prefer(std::move(first));
  }

  // Files result i from the background compile if it is still waiting for it.
  void take_compiled(size_t i) {
    auto it = tail_slot_.find(rep_.results[i].variant.name);
    if (it == tail_slot_.end() || !queue_) return;
    const size_t slot = it->second;
    tail_slot_.erase(it);
    const auto t0 = Clock::now();
    const bool pending = trace_.on() && !queue_->done(slot);
    if (pending) trace_(fmt::format("waiting for the compile of {}", rep_.results[i].variant.name));
    const protocol::VariantResult& r = queue_->get(slot);
    add_compile_wait(std::chrono::duration<double>(Clock::now() - t0).count());
    if (pending) trace_("compile in");
    place(i, r);
  }

  void add_compile_wait(double seconds) {
    for (auto& [name, sec] : rep_.phase_seconds)
      if (name == "compile") sec += seconds;
  }

  // Files the background compile's results: all of them (`all`), else only the cudnn-fused
  // templates (no source: nothing to wait for), which engines() expands. Then the injected ones.
  void join_compile(bool all) {
    if (joined_) return;
    joined_ = true;
    for (size_t i = 0; i < rep_.results.size(); ++i)
      if (all || rep_.results[i].variant.candidate == codegen::Candidate::cudnn_fused) take_compiled(i);
    if (all) progress("compiling", variants_.size(), variants_.size(), "");
    for (const auto& r : opt_.injected) {
      rep_.results.push_back(r);
      cubin_paths_.emplace_back();
      place(rep_.results.size() - 1, r);
    }
  }

  // Result i, with its CUBIN written where the worker will read it.
  void place(size_t i, const protocol::VariantResult& r) {
    rep_.results[i] = r;
    if (r.compile.cubin.empty()) return;
    cubin_paths_[i] = (tmp_.path() / fmt::format("{}.cubin", i)).string();
    std::ofstream f(cubin_paths_[i], std::ios::binary);
    f.write(r.compile.cubin.data(), std::streamsize(r.compile.cubin.size()));
  }

  std::string cubin_path(size_t i) const { return cubin_paths_.at(i); }

  // --- engines --------------------------------------------------------------------------
  // Each cudnn-fused template becomes one variant per engine configuration the GPU's cuDNN
  // offers for its graph (listed and built in parallel by the worker); those cuDNN could not
  // build stay as not_supported rows with its reason. Runs before any solution is measured, so
  // the indices it shifts are referenced nowhere yet.
  bool engines() {
    if (opt_.strategy != "model") confirm_early();  // the whole space compiles before measuring
    join_compile(opt_.strategy != "model");
    for (size_t i = 0; i < rep_.results.size();) {
      const auto& r = rep_.results[i];
      if (r.variant.candidate != codegen::Candidate::cudnn_fused || codegen::engine_of(r.variant) ||
          r.status != protocol::Status::ok) {
        ++i;
        continue;
      }
      std::vector<protocol::VariantResult> made = expand(i);
      const std::string path = cubin_paths_[i];
      rep_.results.erase(rep_.results.begin() + std::ptrdiff_t(i));
      cubin_paths_.erase(cubin_paths_.begin() + std::ptrdiff_t(i));
      rep_.results.insert(rep_.results.begin() + std::ptrdiff_t(i), made.begin(), made.end());
      cubin_paths_.insert(cubin_paths_.begin() + std::ptrdiff_t(i), made.size(), path);
      i += made.size();
    }
    return true;
  }

  std::vector<protocol::VariantResult> expand(size_t i) {
    protocol::VariantResult t = rep_.results[i];
    if (opt_.math == MathMode::fp32) {
      // Seen on the H200 (cuDNN 9.19): with the TF32 tensor cores ruled out, cuDNN offered one
      // engine for the fused conv + epilogue graph, taking 360 ms for kernelbench-31. Reported
      // as what it is, not timed as a slow choice.
      t.status = protocol::Status::not_supported;
      t.reason = "strict fp32: cuDNN's runtime fusion of conv + epilogue runs on TF32 tensor cores only";
      return {t};
    }
    progress("listing cuDNN engine configurations", 0, 1, t.variant.name);
    trace_(fmt::format("listing cuDNN engine configurations of {}", t.variant.name));
    if (!lanes_[0].session) start_session(0);
    // The guided search runs a few configurations of each template: they are built as it runs
    // them, not all up front.
    protocol::EnginesRequest req{t.variant, std::max(0, opt_.max_variants), opt_.strategy != "model"};
    nlohmann::json reply;
    try {
      reply = lanes_[0].worker->request(to_json(req), seconds(std::max(600.0, opt_.variant_timeout_s)));
    } catch (const WorkerLost& e) {
      t.status = e.timed_out ? protocol::Status::timeout : protocol::Status::faulted;
      t.reason = "listing cuDNN engine configurations: " + e.reason;
      restart(0);
      return {t};
    }
    if (reply.contains("error") || !reply.contains("engines")) {
      t.status = reply.contains("error") ? protocol::Status::launch_failed : protocol::Status::faulted;
      t.reason = "listing cuDNN engine configurations: " +
                 reply.value("error", reply.value("reason", std::string("the worker lost its context")));
      if (!reply.contains("error")) restart(0);
      return {t};
    }
    const protocol::EnginesReply er = protocol::engines_reply_from_json(reply);
    if (er.refused) {
      t.status = protocol::Status::not_supported;
      t.reason = er.reason;
      return {t};
    }
    add_note(fmt::format("cuDNN engine configurations for {}: {} listed{} in {:.2f} s", t.variant.name,
                         er.engines.size(), req.build ? " and built" : " (each built when run)", er.build_s));
    std::vector<protocol::VariantResult> out;
    for (const protocol::EngineEntry& e : er.engines) {
      protocol::VariantResult r = t;
      r.variant = codegen::with_engine(t.variant, e.key);
      if (!decision_.only.empty() && decision_.only.count(r.variant.name) == 0) continue;
      if (!opt_.shard.holds_name(r.variant.name)) continue;
      if (!e.built) {
        r.status = protocol::Status::not_supported;
        r.reason = fmt::format("cuDNN {}: {}", e.name, e.reason);
      }
      rep_.conv_names[r.variant.name] = {"cuDNN graph " + e.name};
      out.push_back(std::move(r));
    }
    return out;
  }

  // --- the worker session ---------------------------------------------------------------
  // The session's setup (its context and cuDNN handle, the reference kernels' compile, the
  // input draws and their float64 references: 0.5-0.8 s on the H200) is asked for as soon as the
  // device is known, and runs in the worker while this process generates and compiles;
  // start_session() takes the answer.
  void send_setup() {
    try {
      lanes_[0].worker->send(to_json(setup_));
      lanes_[0].setup_sent = true;
      trace_("setup asked of GPU 0's worker");
    } catch (const WorkerLost&) {
      // start_session() asks again and reports what it finds
    }
  }

  // Lane l's session: the answer to the setup asked for earlier, or to one asked for now.
  void start_session(size_t l) {
    Lane& lane = lanes_[l];
    if (l == 0) progress("preparing inputs and float64 reference", 0, 1, "");
    const auto t0 = Clock::now();
    nlohmann::json info;
    try {
      if (!lane.setup_sent) lane.worker->send(to_json(setup_for(lane.device)));
      lane.setup_sent = false;
      trace_(fmt::format("waiting for lane {}'s setup", l));
      info = lane.worker->receive(seconds(900));
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker{} lost during setup: {}",
                                                 l == 0 ? std::string() : fmt::format(" for device {}", lane.device), e.reason));
    }
    check_reply(info, l == 0 ? std::string("setup") : fmt::format("setup of device {}", lane.device));
    const protocol::SetupReply sr = protocol::setup_reply_from_json(info);
    if (l == 0) {
      rep_.copy_gbps = sr.copy_gbps;
      prefer_by_priors();
    }
    add_note(fmt::format("worker setup{} {:.2f} s (context and cuDNN handle {:.2f} s, input draws and their float64 "
                         "references {:.2f} s), {:.2f} s of it waited for",
                         l == 0 ? std::string() : fmt::format(" on GPU {}", lane.device), sr.setup_s, sr.handles_s,
                         sr.draws_s, std::chrono::duration<double>(Clock::now() - t0).count()));
    lane.session = true;
    // A worker that did not say when it began (begun_s 0) gets "?", not a time before the tune.
    const std::string begun = sr.begun_s > 0 ? fmt::format("{:.3f}", trace_.at(sr.begun_s)) : std::string("?");
    trace_(fmt::format("lane {}'s setup in: the worker began it at {} and took {:.3f} s (context and handle {:.3f}, "
                       "draws {:.3f})",
                       l, begun, sr.setup_s, sr.handles_s, sr.draws_s));
  }

  // Sends result i to lane l's worker to be verified and timed (LaneRunner: the answer is
  // filed by apply_run(), which records a fault or a hang and replaces that worker). False when
  // there is nothing to run (it failed to compile).
  // `ahead`: results the search expects to run next; lane l's worker builds the cuDNN plans among
  // them on a second thread while it runs this one (tune/plan_prebuild.hpp), each asked once.
  bool dispatch(size_t i, size_t l, const std::vector<size_t>& ahead = {}) {
    if (rep_.results[i].status != protocol::Status::ok) return false;
    if (!lanes_[l].session) start_session(l);
    running_[l] = i;
    answered_.erase(i);
    trace_(fmt::format("lane {} runs {}", l, rep_.results[i].variant.name));
    protocol::RunRequest req = run_request(i);
    for (size_t a : ahead) {
      const auto& v = rep_.results[a].variant;
      if (lanes_[l].asked_ahead.insert(v.name).second) {
        req.prebuild.push_back(v);
        trace_(fmt::format("lane {} builds the cuDNN plan of {} ahead", l, v.name));
      }
    }
    runner_->start(l, lanes_[l], to_json(req), seconds(opt_.variant_timeout_s));
    return true;
  }

  // The cuDNN graph configurations (cudnn-fused) among the search's next kAheadLook picks
  // (GuidedSearch::picks), at most kAhead, other than result `now`: those whose plans are worth
  // building while the GPU is busy (their runtime-compiled kernels take 0.5 s each on the H200,
  // call 76). Its picks, not its ranking's head: near the search's end that head holds only
  // items it will not pick, and a plan asked for there was built while the finalist round waited
  // for it (PlanPrebuilder::settle): 0.2-0.9 s of every cold kernelbench-32 tune in calls 85-87.
  static constexpr size_t kAheadLook = 6;
  std::vector<size_t> graphs_ahead(const std::vector<size_t>& picks, const std::vector<size_t>& idx,
                                   size_t now) const {
    constexpr size_t kAhead = 2;
    std::vector<size_t> out;
    for (size_t j : picks) {  // at most kAheadLook: GuidedSearch::picks(kAheadLook)
      if (out.size() == kAhead) break;
      const size_t i = idx[j];
      const auto& r = rep_.results[i];
      if (i != now && r.status == protocol::Status::ok && r.variant.candidate == codegen::Candidate::cudnn_fused &&
          codegen::engine_of(r.variant))
        out.push_back(i);
    }
    return out;
  }

  protocol::RunRequest run_request(size_t i) const {
    const auto& r = rep_.results[i];
    protocol::RunRequest req;
    req.variant = r.variant;
    req.cubin_path = cubin_path(i);
    if (opt_.quick) {
      req.timing.min_reps = 3;
      req.timing.max_reps = 5;
      req.timing.max_seconds = 0.2;
    } else if (r.variant.role() != Role::solution) {
      // A baseline's or floor's first pass only ranks (which floor, the conv's share of each
      // design's estimate): their reported figures come from the finalist and confirmation
      // rounds. Up to 200 samples of a 3.6 ms unfused pipeline was 0.7 s of a cold tune.
      req.timing.max_reps = 40;
      req.timing.max_seconds = 0.25;
    } else if (const auto best = fastest(ready(Role::solution))) {
      // A solution this far behind the best measured so far cannot be a finalist beside it
      // (finalists(): a design out of reach sends its best alone, re-timed there anyway).
      req.timing.behind_ms = (1 + kOutOfReach) * rep_.results[*best].time.median_ms;
    }
    // The run's conv choices (the first GPU's, or another's for a layout the first has not run):
    // every GPU runs the same conv, and none searches for one already chosen.
    req.conv_choices = setup_.conv_choices;
    return req;
  }

  // Files lane l's answer for the result it ran, and frees the lane.
  void apply_run(size_t l, LaneAnswer a) {
    const size_t i = running_.at(l);
    auto& r = rep_.results[i];
    batch_.push_back(i);
    answered_.insert(i);
    trace_(fmt::format("lane {} answered for {}{}", l, r.variant.name, a.lost ? " (lost)" : ""));
    if (a.lost) {
      r.status = a.lost->timed_out ? protocol::Status::timeout : protocol::Status::faulted;
      r.reason = a.lost->reason;
      restart(l);
      return;
    }
    const nlohmann::json& reply = a.reply;
    if (reply.contains("error")) {
      r.status = protocol::Status::launch_failed;
      r.reason = reply["error"].get<std::string>();
      return;
    }
    if (!reply.contains("timed")) {
      // The worker caught a lost context, said so ({"status": "faulted", "reason"}) and exited.
      r.status = protocol::Status::faulted;
      r.reason = reply.value("reason", "");
      restart(l);
      return;
    }
    const protocol::RunReply rr = protocol::run_reply_from_json(reply);
    r.status = rr.status;
    r.reason = rr.reason;
    r.error = rr.error;
    r.verified = rr.status == protocol::Status::ok;
    r.timed = rr.timed;
    if (rr.timed) {
      r.time = rr.time;
      r.gpu = lanes_[l].device;
    }
    if (!rr.convs.empty()) rep_.conv_names[r.variant.name] = rr.convs;
    // The first GPU's choices are the run's (its worker may replace a stored choice that no
    // longer verifies); another GPU adds only a layout none had chosen when it ran.
    if (l == 0) {
      for (const auto& [layout, choice] : rr.conv_choices) setup_.conv_choices[layout] = choice;
    } else {
      setup_.conv_choices.insert(rr.conv_choices.begin(), rr.conv_choices.end());
    }
    for (const auto& n : rr.notes) add_note(n);
  }

  void add_note(const std::string& n) {
    if (std::find(rep_.notes.begin(), rep_.notes.end(), n) == rep_.notes.end()) rep_.notes.push_back(n);
  }

  // A fresh worker for lane l, its setup asked for at once: it runs while the other GPUs go on,
  // and start_session(l) takes the answer when the lane is next used.
  void restart(size_t l) {
    Lane& lane = lanes_[l];
    lane.worker->restart();
    lane.session = false;
    lane.setup_sent = false;
    lane.asked_ahead.clear();  // the new worker has built nothing
    try {
      lane.worker->send(to_json(setup_for(lane.device)));
      lane.setup_sent = true;
      trace_(fmt::format("lane {}'s worker replaced; setup asked of GPU {}'s worker", l, lane.device));
    } catch (const WorkerLost&) {
      // start_session() asks again and reports what it finds
    }
  }

  // Re-timing of `idx`, interleaved (sustained for a full run's confirmation round); their
  // figures are replaced by this round's. Sustained, the first `turns` take turns (the winner
  // and the runner-up: protocol::RetimeRequest::turns).
  void retime(const std::vector<size_t>& idx, protocol::TimeRound round, int turns = 0) {
    // The confirmation round's figures are the ones reported and stored: sustained, as a model
    // runs the plan (timing_stats.hpp). Quick runs (correctness, smoke's paired comparison with
    // unfused) keep interleaved rounds, which need two plans.
    const bool sustained = round == protocol::TimeRound::confirmation && !opt_.quick;
    if (idx.empty() || (idx.size() < 2 && !sustained)) return;
    const auto figures = request_retime(idx, round, sustained, turns);
    for (size_t i : idx) {
      rep_.results[i].time = figures.at(rep_.results[i].variant.name);
      rep_.results[i].gpu = lanes_[0].device;
    }
    if (opt_.on_batch) opt_.on_batch(rep_, idx);
  }

  // Asks the worker to re-time `idx`; its figures by variant name.
  std::map<std::string, protocol::TimeFigures> request_retime(const std::vector<size_t>& idx, protocol::TimeRound round, bool sustained,
                                                    int turns = 0) {
    if (!lanes_[0].session) start_session(0);
    trace_(fmt::format("re-timing {} plans ({}, {})", idx.size(), time_round_name(round), sustained ? "sustained" : "interleaved"));
    LaneAnswer a;
    try {
      a.reply = lanes_[0].worker->request(to_json(retime_request(idx, round, sustained, turns)), retime_timeout(idx.size()));
    } catch (const WorkerLost& e) {
      a.lost = e;
    }
    trace_("re-timing answered");
    return retime_figures(a, round);
  }

  protocol::RetimeRequest retime_request(const std::vector<size_t>& idx, protocol::TimeRound round, bool sustained, int turns = 0) const {
    protocol::RetimeRequest req;
    req.rounds = std::max(1, opt_.retime_rounds);
    req.round = round;
    req.sustained = sustained;
    req.turns = sustained ? turns : 0;
    for (size_t i : idx) req.entries.push_back({rep_.results[i].variant, cubin_path(i)});
    return req;
  }

  ms retime_timeout(size_t plans) const { return seconds(opt_.variant_timeout_s * double(plans) + 60); }

  // A re-timing's figures by variant name (its notes go to the report); a lost or faulted worker
  // ends the run, since the figures the report rests on are these.
  std::map<std::string, protocol::TimeFigures> retime_figures(const LaneAnswer& a, protocol::TimeRound round) {
    if (a.lost)
      throw Error(ExitCode::failure, fmt::format("GPU worker lost while re-timing ({}): {}", time_round_name(round), a.lost->reason));
    const nlohmann::json& reply = a.reply;
    check_reply(reply, "re-timing");
    if (!reply.contains("results"))  // the context was lost: the worker said so and exited
      throw Error(ExitCode::failure, fmt::format("GPU worker faulted while re-timing ({}): {}", time_round_name(round),
                                                 reply.value("reason", "")));
    protocol::RetimeReply rr = protocol::retime_reply_from_json(reply);
    rep_.notes.insert(rep_.notes.end(), rr.notes.begin(), rr.notes.end());
    return std::move(rr.results);
  }

  void flush(bool force) {
    if (opt_.on_batch && !batch_.empty() && (force || batch_.size() >= 16)) {
      opt_.on_batch(rep_, batch_);
      batch_.clear();
    }
  }

  // Verifies and times every result with this role: the solutions on every GPU (an idle one
  // takes the next), the baselines and floors on the first, whose conv time ranks the solutions.
  void measure_all(Role role) {
    std::vector<size_t> todo;
    for (size_t i = 0; i < rep_.results.size(); ++i)
      if (rep_.results[i].variant.role() == role) todo.push_back(i);
    const size_t width = role == Role::solution ? lanes_.size() : 1;
    // The workers' setup (inputs, references, its own progress line) comes first, so the count
    // below runs uninterrupted.
    if (!todo.empty()) {
      if (!lanes_[0].session) start_session(0);
      ready_lanes(width);
    }
    size_t done = 0;
    for (size_t i : todo) {
      progress(role == Role::solution ? "verifying and timing" : role == Role::floor ? "verifying and timing floors"
                                                                                       : "verifying and timing baselines",
               ++done, todo.size(), rep_.results[i].variant.name);
      flush(false);
      if (!dispatch(i, idle_lane(width))) batch_.push_back(i);  // nothing to run: filed as it is
    }
    drain();
  }

  // An idle lane among the first `width`, once one answer is filed if all of them are busy.
  size_t idle_lane(size_t width) {
    for (size_t l = 0; l < width; ++l)
      if (!runner_->busy(l)) return l;
    const size_t l = runner_->wait_any();
    collect(l);
    return l;
  }

  // Files lane l's answer (it has one, or will): a variant's, or the early confirmation's.
  void collect(size_t l) {
    if (running_.at(l) == kConfirming) {
      finish_confirm_early(runner_->take(l));
    } else {
      apply_run(l, runner_->take(l));
    }
  }

  // Files every answer still out.
  void drain() {
    for (size_t l = 0; l < lanes_.size(); ++l)
      if (runner_->busy(l)) collect(l);
  }

  // The verified and timed results with this role.
  std::vector<size_t> ready(Role role) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < rep_.results.size(); ++i) {
      const auto& r = rep_.results[i];
      if (r.verified && r.timed && r.variant.role() == role) out.push_back(i);
    }
    return out;
  }

  std::optional<size_t> fastest(const std::vector<size_t>& idx) const {
    std::optional<size_t> best;
    for (size_t i : idx)
      if (!best || rep_.results[i].time.median_ms < rep_.results[*best].time.median_ms) best = i;
    return best;
  }

  // --- baselines ------------------------------------------------------------------------
  // The floors and baselines' first pass. Their interleaved figures come from the finalist round
  // (and the confirmation), beside the solutions; a round of their own here cost a cold tune
  // about 1.3 s (1 s of heat and 15 rounds of four plans; kernelbench-31 on the H200, call 56).
  bool baselines() {
    measure_all(Role::floor);
    measure_all(Role::baseline);
    // The conv alone, per layout, as its first pass measured it: it stands in for every design's
    // conv step while the solutions' first passes are compared (estimate()), and those are
    // short bursts too, so the two compare like for like. Designs are compared with each other
    // in the finalist round, interleaved, on their own figures.
    for (size_t i : ready(Role::floor)) {
      const auto& r = rep_.results[i];
      for (size_t s = 0; s < r.variant.plan.size(); ++s)
        if (r.variant.plan[s].kind() == codegen::StepKind::cudnn_conv && r.variant.plan[s].timed &&
            s < r.time.step_median_ms.size())
          conv_ms_[int(r.variant.plan[s].conv().layout)] = r.time.step_median_ms[s];
    }
    prefer_by_priors();
    return true;
  }

  // --- measure --------------------------------------------------------------------------
  bool measure() {
    if (opt_.strategy == "model") {
      measure_guided();
    } else {
      measure_all(Role::solution);
    }
    return true;
  }

  // `--strategy model`: the guided search picks which compiled solution to measure next (each
  // design's most promising by the cost model first, then by a model fitted to what it measured)
  // and stops when nothing left is predicted to beat the best by its margin, or at the time
  // budget. The variants it never ran leave the results: they were neither verified nor timed.
  void measure_guided() {
    search_started_ = true;
    std::vector<size_t> idx;
    std::vector<SearchItem> items = search_items(idx);
    GuidedOptions go;
    go.seed = opt_.seed;
    GuidedSearch search(std::move(items), go);
    const auto slot_of = [&](size_t j) {
      const auto it = tail_slot_.find(rep_.results[idx[j]].variant.name);
      return it == tail_slot_.end() ? std::string::npos : it->second;
    };
    if (!idx.empty()) {
      if (!lanes_[0].session) start_session(0);
      ready_lanes(lanes_.size());
    }
    // A cold tune (solutions still compiling): the first GPU confirms the baselines now, before
    // the first pick, while the pool compiles. Started at the search's first wait for a compile
    // instead, it waited for the cuDNN plans the picks before had asked to be built ahead (a
    // re-timing round starts once none is building: PlanPrebuilder::settle), 0.5 s of call 83's
    // cold #31 tune, and the search waited for it after its compile was in. Started after the
    // compiled probes instead (their answers re-pointing the pool for the whole confirmation),
    // it bought nothing measurable (call 97: cold #31 7.4-8.9 s against 7.2-8.7).
    if (confirm_early_due() && std::any_of(idx.begin(), idx.end(), [&](size_t i) { return compile_pending(i); }))
      start_confirm_early();
    const size_t width = lanes_.size();
    const auto t0 = Clock::now();
    std::string stop = "no unmeasured variant is predicted to beat the best by its margin";
    bool stopped = false;
    // With several GPUs, one pick per GPU is out at a time. Answers are recorded in the order
    // their picks were made (a pick that failed to compile at once, when made), and the search
    // picks again only after each record: its picks depend on the answers, never on which GPU
    // answered first (--seed reproduces a search).
    std::deque<std::pair<size_t, size_t>> out;  // (item, result) started and not recorded, oldest first
    for (;;) {
      while (!stopped && out.size() < width) {
        if (opt_.time_budget_s > 0 && std::chrono::duration<double>(Clock::now() - t0).count() > opt_.time_budget_s) {
          stop = fmt::format("the time budget of {} s", opt_.time_budget_s);
          stopped = true;
          break;
        }
        const std::optional<size_t> j = search.next();
        if (!j) break;  // nothing worth measuring until the answers still out are in
        prefer_next(search, slot_of);  // what it learnt so far moves the pool's head
        const size_t i = idx[*j];
        progress("verifying and timing (guided)", search.measured() + search.pending() + 1, idx.size(),
                 rep_.results[i].variant.name);
        take_compiled(i);
        if (rep_.results[i].status != protocol::Status::ok) {  // a compile failure or over the device's limits
          search.record(*j, std::nullopt);
          continue;
        }
        flush(false);
        search.start(*j);
        dispatch(i, idle_lane(width), graphs_ahead(search.picks(kAheadLook), idx, i));
        out.emplace_back(*j, i);
      }
      if (out.empty()) break;
      const auto [j, i] = out.front();
      out.pop_front();
      while (answered_.count(i) == 0) collect(runner_->wait_any());
      const auto& r = rep_.results[i];
      search.record(j, r.verified && r.timed ? std::optional<double>(estimate(i)) : std::nullopt);
    }
    drain();  // the early confirmation, if it is still running
    flush(true);
    if (queue_) queue_->stop();  // what the search never picked need not compile
    rep_.notes.push_back(fmt::format("guided search measured {} of {} solution variants; it stopped at {}",
                                     search.measured(), idx.size(), stop));
    std::vector<bool> drop(rep_.results.size(), false);
    for (size_t j = 0; j < idx.size(); ++j) drop[idx[j]] = !search.was_measured(j);
    size_t w = 0;
    for (size_t i = 0; i < rep_.results.size(); ++i) {
      if (drop[i]) continue;
      if (w != i) {
        rep_.results[w] = std::move(rep_.results[i]);
        cubin_paths_[w] = std::move(cubin_paths_[i]);
      }
      ++w;
    }
    rep_.results.resize(w);
    cubin_paths_.resize(w);
  }

  // A pipeline's time with its conv steps at the conv's interleaved time, its other steps at
  // their own: generated kernels time steadily, the conv varies run to run by several percent.
  double estimate(size_t i) const {
    const auto& r = rep_.results[i];
    double t = 0;
    for (size_t s = 0; s < r.variant.plan.size() && s < r.time.step_median_ms.size(); ++s) {
      const auto& st = r.variant.plan[s];
      if (!st.timed) continue;
      double step = r.time.step_median_ms[s];
      if (st.kind() == codegen::StepKind::cudnn_conv)
        if (auto it = conv_ms_.find(int(st.conv().layout)); it != conv_ms_.end()) step = it->second;
      t += step;
    }
    return t;
  }

  // --- finalists ------------------------------------------------------------------------
  bool finalists() {
    std::map<std::string, std::vector<size_t>> by_design;
    double best = std::numeric_limits<double>::infinity();
    for (size_t i : ready(Role::solution)) {
      by_design[rep_.results[i].variant.design].push_back(i);
      best = std::min(best, estimate(i));
    }
    std::vector<size_t> round;
    for (auto& [design, idx] : by_design) {
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return estimate(a) < estimate(b); });
      // A design whose best is out of reach of the best of all sends its best alone: the report
      // still shows it beside the others, and the round stays short (on #31, four epilogue and
      // three cuDNN-fusion variants 40-60% behind the fused conv were re-timed for nothing).
      if (estimate(idx[0]) > (1 + kOutOfReach) * best) {
        idx.resize(1);
        finalists_.push_back(idx[0]);
        continue;
      }
      // The first pass times each variant in a short burst, and a burst right after a cool
      // spell runs at boost clocks: on the H200 two variants of one design swapped places by
      // 8% between the first pass and sustained timing (docs/runs/2026-12-02/call39-epilogue-ilp,
      // `mish | mish`). So every variant within kFinalistMargin of the design's best goes on to
      // the interleaved round too, up to kMaxFinalists (or TuneOptions::finalists if larger).
      size_t keep = std::min(idx.size(), size_t(std::max(1, opt_.finalists)));
      while (keep < idx.size() && keep < size_t(std::max(opt_.finalists, kMaxFinalists)) &&
             estimate(idx[keep]) <= (1 + kFinalistMargin) * estimate(idx[0]))
        ++keep;
      idx.resize(keep);
      finalists_.insert(finalists_.end(), idx.begin(), idx.end());
    }
    round = finalists_;
    for (Role role : {Role::baseline, Role::floor})
      for (size_t i : round_references(ready(role), role == Role::baseline ? std::optional(best) : std::nullopt))
        round.push_back(i);
    progress("re-timing finalists interleaved", 0, 1, "");
    retime(round, protocol::TimeRound::finalists);
    pick_winner();
    return true;
  }

  // The baselines (or floors) that the finalist round re-times: only where its figures can
  // change an outcome. A baseline within reach of the best solution could win (`reach`: the
  // best solution's estimate, infinite with none; no reach for floors, which never win). Another
  // of its role within kFinalistMargin of the fastest: the round says which is the fastest, the
  // one the report compares with and the confirmation round times. The others keep their first
  // passes; the fastest of each role is timed sustained in the confirmation round (or was,
  // early). On #31 the two unfused pipelines and two cuDNN convs were 44% of each finalist
  // round's GPU time (docs/runs/2026-12-04/call90-picks-ahead-31).
  std::vector<size_t> round_references(std::vector<size_t> idx, std::optional<double> reach) const {
    auto median = [&](size_t i) { return rep_.results[i].time.median_ms; };
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return median(a) < median(b); });
    if (idx.empty()) return {};
    const double t0 = median(idx[0]);
    const bool contested = idx.size() > 1 && median(idx[1]) <= (1 + kFinalistMargin) * t0;
    const auto needed = [&](size_t i) {
      return (contested && median(i) <= (1 + kFinalistMargin) * t0) ||  // near the fastest
             (reach && estimate(i) <= (1 + kOutOfReach) * *reach);       // could win
    };
    const auto first = std::find_if(idx.begin(), idx.end(), needed);
    if (first == idx.end()) return {};
    // Which of a role is the fastest must not be read off mixed figures: one re-timed under load
    // can read up to 10% slower than a burst (kOutOfReach's note), so every other within 25% of
    // the fastest one re-timed is re-timed too.
    const double mixed = (1 + kOutOfReach) * median(*first);
    std::vector<size_t> out;
    for (size_t i : idx)
      if (needed(i) || median(i) <= mixed) out.push_back(i);
    return out;
  }

  void pick_winner() {
    std::vector<size_t> complete = finalists_;
    for (size_t i : ready(Role::baseline)) complete.push_back(i);
    std::stable_sort(complete.begin(), complete.end(),
                     [&](size_t a, size_t b) { return rep_.results[a].time.median_ms < rep_.results[b].time.median_ms; });
    rep_.winner = complete.empty() ? std::nullopt : std::optional(complete[0]);
    rep_.runner_up = complete.size() < 2 ? std::nullopt : std::optional(complete[1]);
    rep_.unfused = fastest(ready(Role::baseline));
    rep_.cudnn = fastest(ready(Role::floor));
  }

  // --- the baselines' confirmation, early ---------------------------------------------------
  // The confirmation round's baseline and floor (the fastest unfused pipeline and the fastest
  // cuDNN conv alone, by their first pass) do not depend on the winner, and their sustained
  // timing costs a second or two (call 57, #31: 0.66 s and 0.98 s). They are timed while the
  // solutions compile (a cold tune's GPU would idle through its waits for compiles); confirm()
  // keeps these figures where the finalist round names the same plans and times any other itself.
  // Not run yet, and wanted: a full run's, once the first GPU holds its session.
  bool confirm_early_due() const { return !early_tried_ && !opt_.quick && lanes_[0].session; }

  // The whole of it, before measuring (exhaustive, random: every compile is waited for first).
  void confirm_early() {
    start_confirm_early();
    if (runner_->busy(0)) collect(0);
  }

  // Starts it on the first GPU (idle), answered through collect(): the guided search goes on
  // taking its compile and running picks on the other GPUs meanwhile.
  void start_confirm_early() {
    if (!confirm_early_due()) return;
    early_tried_ = true;
    early_idx_.clear();
    for (Role role : {Role::baseline, Role::floor})
      if (auto i = fastest(ready(role))) early_idx_.push_back(*i);
    if (early_idx_.empty()) return;
    progress("confirming the baselines while the solutions compile", 0, 1, "");
    early_t0_ = Clock::now();
    running_[0] = kConfirming;
    trace_(fmt::format("lane 0 confirms the baselines early ({} plans)", early_idx_.size()));
    runner_->start(0, lanes_[0], to_json(retime_request(early_idx_, protocol::TimeRound::confirmation, true)),
                   retime_timeout(early_idx_.size()));
  }

  void finish_confirm_early(LaneAnswer a) {
    trace_("lane 0's early confirmation answered");
    const auto figures = retime_figures(a, protocol::TimeRound::confirmation);
    std::vector<std::string> names;
    for (size_t i : early_idx_) {
      names.push_back(rep_.results[i].variant.name);
      early_[names.back()] = figures.at(names.back());
    }
    // Up to when its answer was taken: the search may have been busy then.
    add_note(fmt::format("confirmation round of {} run {}, {:.2f} s", fmt::join(names, " and "),
                         opt_.strategy == "model" ? "while the solutions compiled" : "before the solutions were measured",
                         std::chrono::duration<double>(Clock::now() - early_t0_).count()));
  }

  // Whether taking result i would wait for the background compile.
  bool compile_pending(size_t i) {
    auto it = tail_slot_.find(rep_.results[i].variant.name);
    return it != tail_slot_.end() && queue_ && !queue_->done(it->second);
  }

  // --- confirm --------------------------------------------------------------------------
  bool confirm() {
    if (!rep_.winner) return true;
    std::vector<size_t> round{*rep_.winner};
    auto add = [&](std::optional<size_t> i) {
      if (i && std::find(round.begin(), round.end(), *i) == round.end()) round.push_back(*i);
    };
    add(rep_.runner_up);
    add(rep_.unfused);
    // One floor: the fastest by the finalist round (by the first pass where no floor was
    // contested there), the cuDNN figure the report compares with.
    // The slower layout's floor would cost a sustained run (about 1 s on the presets, 1.6 s on
    // problems of microseconds, call 52) for a figure nothing is judged by.
    const std::optional<size_t> floor = fastest(ready(Role::floor));
    add(floor);
    progress("confirmation round", 0, 1, "");
    // Plans confirmed while the solutions compiled (confirm_early()) keep those figures.
    // The winner and the runner-up, whose comparison is the tie rule's verdict, take turns
    // (sustain_round.hpp): the same stretch of the GPU's clocks for both. A baseline of the pair
    // confirmed early is timed again in it.
    std::vector<size_t> fresh, early;
    for (size_t i : round) {
      const bool in_pair = i == *rep_.winner || (rep_.runner_up && i == *rep_.runner_up);
      (early_.count(rep_.results[i].variant.name) != 0 && !in_pair ? early : fresh).push_back(i);
    }
    retime(fresh, protocol::TimeRound::confirmation, rep_.runner_up ? 2 : 0);
    for (size_t i : early) {
      rep_.results[i].time = early_.at(rep_.results[i].variant.name);
      rep_.results[i].gpu = lanes_[0].device;
    }
    if (!early.empty() && opt_.on_batch) opt_.on_batch(rep_, early);
    if (opt_.quick && fresh.size() >= 2) rep_.confirm_rounds = std::max(1, opt_.retime_rounds);
    if (!opt_.quick) {  // sustained: the samples in each settled figure, the fewest of the round
      rep_.confirm_rounds = std::numeric_limits<int>::max();
      for (size_t i : round) rep_.confirm_rounds = std::min(rep_.confirm_rounds, rep_.results[i].time.count);
    }
    // The finalist round chose the winner; should the confirmation round order the complete
    // pipelines in it differently (noise between nearly equal plans), its order stands, so the
    // winner is never slower than another pipeline in the figures shown beside it.
    std::vector<size_t> complete;
    for (size_t i : round)
      if (rep_.results[i].variant.role() != Role::floor) complete.push_back(i);
    std::stable_sort(complete.begin(), complete.end(),
                     [&](size_t a, size_t b) { return rep_.results[a].time.median_ms < rep_.results[b].time.median_ms; });
    rep_.winner = complete[0];
    rep_.runner_up = complete.size() > 1 ? std::optional(complete[1]) : std::nullopt;
    // The winner has to beat the runner-up by more than the noise measured in this round;
    // otherwise the two tie, and the fixed secondary key decides (tie_break.hpp).
    if (rep_.runner_up) {
      rep_.tie = decide_tie(rep_.results[*rep_.winner], rep_.results[*rep_.runner_up]);
      if (rep_.tie.swap) std::swap(*rep_.winner, *rep_.runner_up);
    }
    rep_.cudnn = floor;
    return true;
  }

  const spec::Problem& problem_;
  const TuneOptions& opt_;
  TuneTrace trace_{opt_.trace_path};
  TuneReport rep_;
  protocol::SetupRequest setup_;
  // One worker per GPU; lanes_[0], the first GPU, runs everything but the solutions' first
  // passes, which every lane shares (runner_ waits for their answers).
  std::vector<Lane> lanes_;
  std::unique_ptr<LaneRunner> runner_;
  std::vector<size_t> running_;  // per lane: the result it runs
  std::set<size_t> answered_;    // results whose answers apply_run() filed since dispatch()
  gpu::DeviceLimits limits_;
  TuneDecision decision_;
  std::vector<codegen::Variant> variants_;
  TempDir tmp_{"fusetune-tune"};
  std::vector<size_t> batch_;
  std::map<int, double> conv_ms_;  // by spec::Layout
  std::vector<size_t> finalists_;
  // By variant name (the measure phase drops rows, engines() shifts them): confirmed early.
  std::map<std::string, protocol::TimeFigures> early_;
  bool early_tried_ = false;
  bool search_started_ = false;  // measure_guided() began: its lookahead leads the pool
  std::vector<size_t> early_idx_;  // what the early confirmation times (rows stay put meanwhile)
  Clock::time_point early_t0_;
  static constexpr size_t kConfirming = std::numeric_limits<size_t>::max();  // running_: lane 0 confirms
  // The solutions' background compile, and each solution's index in it until its result is
  // filed in rep_.results (by name: engines() shifts the rows).
  std::unique_ptr<CompileQueue> queue_;
  std::map<std::string, size_t> tail_slot_;
  bool joined_ = false;
  std::mutex progress_mutex_;     // compile threads report progress one at a time
  std::vector<std::string> cubin_paths_;  // per result: its CUBIN file ("" when it has none)
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
