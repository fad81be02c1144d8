#include "tune/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <random>

#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "tune/compile_all.hpp"
#include "tune/limits_json.hpp"
#include "tune/temp_dir.hpp"
#include "tune/worker_client.hpp"

namespace fusetune::tune {

namespace {

using ms = std::chrono::milliseconds;

ms seconds(double s) { return ms(int64_t(s * 1000)); }

void fill_error(ErrorFigures& e, const nlohmann::json& j) {
  e.max_abs = j.value("max_abs", 0.0);
  e.max_rel = j.value("max_rel", 0.0);
  e.rel_l2 = j.value("rel_l2", 0.0);
}

void fill_time(TimeFigures& t, const nlohmann::json& j) {
  t.min_ms = j.value("min", 0.0);
  t.median_ms = j.value("median", 0.0);
  t.max_ms = j.value("max", 0.0);
  t.count = j.value("count", 0);
  t.kernel_median_ms = j.value("kernel_median", 0.0);
  t.spread = j.value("spread", 0.0);
}

// Throws NoGpuError / Error when the worker reports an error for a request that must work.
void check_reply(const nlohmann::json& reply, const std::string& what) {
  if (!reply.contains("error")) return;
  const int code = reply.value("exit_code", 1);
  const std::string msg = fmt::format("{}: {}", what, reply["error"].get<std::string>());
  if (code == int(ExitCode::no_gpu)) throw NoGpuError(reply["error"].get<std::string>());
  throw Error(ExitCode(code), msg);
}

// Baselines first: cudnn (the floor) and unfused (whose TF32 error sets the tf32 tolerance).
int run_order(const codegen::Variant& v) {
  if (v.candidate == "cudnn") return 0;
  if (v.candidate == "unfused") return 1;
  return 2;
}

// Evenly spaced variants of each design (name up to its parameters, e.g. "epilogue.nchw"),
// the first and last always among them: the extremes of each parameter range get run.
std::vector<codegen::Variant> sample_variants(std::vector<codegen::Variant> all, int per_design) {
  if (per_design <= 0) return all;
  auto design = [](const codegen::Variant& v) {
    const auto dot = v.name.find('.', v.name.find('.') + 1);
    return v.name.substr(0, dot);
  };
  std::vector<codegen::Variant> out;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && design(all[j]) == design(all[i])) ++j;
    const size_t n = j - i, keep = std::min(n, size_t(per_design));
    for (size_t t = 0; t < keep; ++t) out.push_back(all[i + (keep == 1 ? 0 : t * (n - 1) / (keep - 1))]);
    i = j;
  }
  return out;
}

// `--strategy random --budget N`: N generated variants drawn with a fixed seed (so a re-run
// draws the same ones), plus every baseline.
std::vector<codegen::Variant> random_subset(std::vector<codegen::Variant> all, size_t budget) {
  std::vector<codegen::Variant> out, pool;
  for (auto& v : all) (v.candidate == "unfused" || v.candidate == "cudnn" ? out : pool).push_back(std::move(v));
  std::mt19937_64 rng(20261129);
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(std::min(budget, pool.size()));
  for (auto& v : pool) out.push_back(std::move(v));
  return out;
}

}  // namespace

double speedup(const TuneReport& r, size_t baseline_index, size_t i) {
  const auto& b = r.results[baseline_index];
  const auto& x = r.results[i];
  if (!b.timed || !x.timed || x.time.median_ms <= 0) return 0.0;
  return b.time.median_ms / x.time.median_ms;
}

TuneReport run_tune(const spec::Problem& problem, const TuneOptions& opt) {
  TuneReport rep;
  rep.problem = spec::canonical(problem);
  rep.key = spec::problem_key(problem);
  rep.math = opt.math;
  auto progress = [&](const std::string& phase, size_t done, size_t total, const std::string& detail) {
    if (opt.progress) opt.progress(phase, done, total, detail);
  };

  const std::vector<std::string> worker_argv{opt.worker_exe, "__worker"};
  auto worker = std::make_unique<WorkerClient>(worker_argv);

  // 1. The device, as the worker sees it: the parent never creates a CUDA context.
  progress("device", 0, 1, "");
  nlohmann::json dev;
  try {
    dev = worker->request({{"cmd", "device"}, {"device", opt.device}}, seconds(120));
  } catch (const WorkerLost& e) {
    throw Error(ExitCode::failure, fmt::format("GPU worker failed to start: {}", e.reason));
  }
  check_reply(dev, "device");
  const gpu::DeviceLimits limits = limits_from_json(dev.at("limits"));
  rep.device = dev;
  TuneDecision decision;
  if (opt.on_device) decision = opt.on_device(dev);
  if (decision.stop) {
    rep.stopped = true;
    try {
      worker->request({{"cmd", "quit"}}, seconds(10));
    } catch (const WorkerLost&) {
    }
    return rep;
  }

  // 2. Generate and compile everything (threads, no GPU needed).
  codegen::GenerateOptions gen;
  gen.problem_text = rep.problem;
  gen.plant = opt.plant;
  auto variants = sample_variants(codegen::generate_variants(problem, limits, gen), opt.max_variants);
  if (opt.strategy == "random" && opt.budget > 0) variants = random_subset(std::move(variants), size_t(opt.budget));
  if (!decision.only.empty()) {
    std::erase_if(variants, [&](const codegen::Variant& v) {
      return v.candidate != "unfused" && v.candidate != "cudnn" && decision.only.count(v.name) == 0;
    });
  }
  CompileAllOptions copts;
  copts.arch = limits.arch_flag();
  copts.strict_fp32 = opt.math == "fp32";
  copts.jobs = opt.jobs;
  size_t compiled = 0;
  copts.on_done = [&](const VariantResult& r) { progress("compiling", ++compiled, variants.size(), r.variant.name); };
  rep.results = compile_all(variants, limits, copts);
  for (const auto& r : opt.injected) rep.results.push_back(r);

  TempDir tmp("fusetune-tune");
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const auto& r = rep.results[i];
    if (r.compile.cubin.empty()) continue;
    std::ofstream f(tmp.path() / fmt::format("{}.cubin", i), std::ios::binary);
    f.write(r.compile.cubin.data(), std::streamsize(r.compile.cubin.size()));
  }

  // 3. Inputs, references and cuDNN in the worker.
  nlohmann::json setup = {{"cmd", "setup"}, {"problem", rep.problem}, {"math", opt.math}, {"device", opt.device},
                          {"draws", 2}};
  auto start_session = [&]() {
    progress("preparing inputs and float64 reference", 0, 1, "");
    nlohmann::json info;
    try {
      info = worker->request(setup, seconds(900));
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker lost during setup: {}", e.reason));
    }
    check_reply(info, "setup");
    rep.copy_gbps = info.value("copy_gbps", rep.copy_gbps);
    return info;
  };
  start_session();

  std::vector<size_t> order(rep.results.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return run_order(rep.results[a].variant) < run_order(rep.results[b].variant); });

  // 4. Verify and time every variant that compiled.
  nlohmann::json tf32_bound;
  size_t done = 0;
  std::vector<size_t> batch;
  auto flush = [&](bool force) {
    if (opt.on_batch && !batch.empty() && (force || batch.size() >= 16)) {
      opt.on_batch(rep, batch);
      batch.clear();
    }
  };
  for (size_t i : order) {
    auto& r = rep.results[i];
    progress("verifying and timing", ++done, order.size(), r.variant.name);
    flush(false);
    batch.push_back(i);  // flushed at the next iteration, once measured below
    if (r.status != Status::ok) continue;
    nlohmann::json policy;
    if (r.variant.candidate == "cudnn") policy = {{"mode", "conv"}};
    else if (opt.math == "fp32") policy = {{"mode", "fp32"}};
    else if (r.variant.candidate == "unfused") policy = {{"mode", "baseline"}};
    else if (!tf32_bound.is_null()) policy = {{"mode", "tf32"}, {"max_abs", tf32_bound["max_abs"]}, {"rel_l2", tf32_bound["rel_l2"]}};
    else policy = {{"mode", "fp32"}};  // no baseline error measured: hold to the fp32 tolerance

    nlohmann::json req = {{"cmd", "run"}, {"variant", codegen::to_json(r.variant)}, {"verify", policy}, {"time", true}};
    if (opt.quick) req["timing"] = {{"min_reps", 3}, {"max_reps", 5}, {"max_seconds", 0.2}};
    if (!r.compile.cubin.empty()) req["cubin_path"] = (tmp.path() / fmt::format("{}.cubin", i)).string();
    nlohmann::json reply;
    bool restart = false;
    try {
      reply = worker->request(req, seconds(opt.variant_timeout_s));
    } catch (const WorkerLost& e) {
      r.status = e.timed_out ? Status::timeout : Status::faulted;
      r.reason = e.reason;
      restart = true;
    }
    if (!restart) {
      if (reply.contains("error")) {
        r.status = Status::launch_failed;
        r.reason = reply["error"].get<std::string>();
      } else {
        r.status = status_from_name(reply.value("status", "faulted")).value_or(Status::faulted);
        r.reason = reply.value("reason", "");
        if (reply.contains("accuracy")) fill_error(r.error, reply["accuracy"]);
        if (reply.contains("time")) {
          fill_time(r.time, reply["time"]);
          r.timed = true;
        }
        if (reply.contains("conv_choices")) setup["conv_choices"] = reply["conv_choices"];
        if (reply.contains("conv")) rep.conv_names[r.variant.name] = reply["conv"];
        r.verified = r.status == Status::ok;
        restart = r.status == Status::faulted;  // the worker exits after a fault
      }
    }
    if (r.variant.candidate == "unfused" && r.verified) tf32_bound = reply.value("accuracy", nlohmann::json::object());
    if (restart) {
      worker->restart();
      start_session();
    }
  }
  flush(true);
  rep.worker_restarts = worker->restarts();

  // 5. Baselines and finalists, re-timed interleaved.
  auto best_of = [&](auto pred) {
    std::optional<size_t> best;
    for (size_t i = 0; i < rep.results.size(); ++i) {
      const auto& r = rep.results[i];
      if (!r.verified || !r.timed || !pred(r)) continue;
      if (!best || r.time.median_ms < rep.results[*best].time.median_ms) best = i;
    }
    return best;
  };
  rep.unfused = best_of([](const VariantResult& r) { return r.variant.candidate == "unfused"; });
  rep.cudnn = best_of([](const VariantResult& r) { return r.variant.candidate == "cudnn"; });

  std::vector<size_t> generated;
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const auto& r = rep.results[i];
    if (r.verified && r.timed && r.variant.candidate != "cudnn" && r.variant.candidate != "unfused") generated.push_back(i);
  }
  std::sort(generated.begin(), generated.end(),
            [&](size_t a, size_t b) { return rep.results[a].time.median_ms < rep.results[b].time.median_ms; });
  if (generated.size() > size_t(opt.finalists)) generated.resize(size_t(opt.finalists));
  std::vector<size_t> finalists = generated;
  if (rep.unfused) finalists.push_back(*rep.unfused);
  if (rep.cudnn) finalists.push_back(*rep.cudnn);

  if (finalists.size() > 1 && !opt.quick) {
    progress("re-timing finalists interleaved", 0, 1, "");
    nlohmann::json names = nlohmann::json::array();
    for (size_t i : finalists) names.push_back(rep.results[i].variant.name);
    try {
      auto reply = worker->request({{"cmd", "retime"}, {"names", names}, {"rounds", opt.retime_rounds}},
                                   seconds(opt.variant_timeout_s * double(finalists.size())));
      check_reply(reply, "retime");
      for (size_t i : finalists) fill_time(rep.results[i].time, reply["results"][rep.results[i].variant.name]);
      if (opt.on_batch) opt.on_batch(rep, finalists);
    } catch (const WorkerLost& e) {
      throw Error(ExitCode::failure, fmt::format("GPU worker lost while re-timing finalists: {}", e.reason));
    }
  }

  // 6. The winner: the fastest verified complete pipeline (the conv alone is not one).
  rep.winner = best_of([](const VariantResult& r) { return r.variant.candidate != "cudnn"; });
  try {
    worker->request({{"cmd", "quit"}}, seconds(10));
  } catch (const WorkerLost&) {
  }
  return rep;
}

}  // namespace fusetune::tune
