#include "tune/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>

#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/event.hpp"
#include "reference/problem_data.hpp"
#include "spec/parser.hpp"

namespace fusetune::tune {

namespace {

using Clock = std::chrono::steady_clock;

int layout_key(spec::Layout l) { return l == spec::Layout::nhwc ? 1 : 0; }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ExitCode::failure, fmt::format("worker cannot read {}", path));
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// NCHW -> NHWC on the host, for the persistent channels-last copies of the input draws
// and the KRSC filters (done once per draw, outside anything timed).
std::vector<float> to_nhwc(const std::vector<float>& src, int64_t n, int64_t c, int64_t hw) {
  std::vector<float> dst(src.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* s = src.data() + (i * c + ch) * hw;
      float* d = dst.data() + i * c * hw + ch;
      for (int64_t p = 0; p < hw; ++p) d[p * c] = s[p];
    }
  return dst;
}

// TEMP: the reference answers of each draw, until session.hpp holds them (being rewritten).
std::map<const void*, std::vector<reference::RefAnswer>>& temp_answers() {
  static std::map<const void*, std::vector<reference::RefAnswer>> answers;
  return answers;
}

nlohmann::json stats_json(const reference::GpuErrorStats& e) {
  return {{"max_abs", e.max_abs}, {"max_rel", e.max_rel}, {"rel_l2", e.rel_l2},
          {"mismatches", e.mismatches}, {"nonfinite", e.nonfinite}};
}

}  // namespace

Session::Session(const nlohmann::json& setup)
    : problem_(spec::parse(setup.at("problem").get<std::string>())),
      math_(setup.value("math", "tf32") == "fp32" ? gpu::MathMode::fp32 : gpu::MathMode::tf32),
      seed_(setup.value("seed", uint64_t{20261129})),
      draws_(std::max(2, setup.value("draws", 2))),
      device_(gpu::query_device(setup.value("device", 0))),
      ctx_(setup.value("device", 0)) {
  const auto t0 = Clock::now();
  ctx_.make_current();
  cudnn_.set_stream(stream_.get());
  conv_only_ = problem_;
  conv_only_.pre.clear();
  conv_only_.post.clear();
  conv_only_.reduce.reset();
  conv_only_.num_params = 0;
  conv_only_.conv.bias = false;

  // Refuse shapes that cannot fit before allocating anything.
  const auto& c = problem_.conv;
  const double in_b = 4.0 * double(c.input_elems()), y_b = 4.0 * double(c.conv_out_elems());
  const double need = draws_ * (2 * in_b + 8.0 * double(c.conv_out_elems()) + 8.0 * double(problem_.out_elems())) +
                      4 * y_b + in_b + 4.0 * double(problem_.out_elems());
  const auto mem = gpu::device_memory();
  if (need > 0.9 * double(mem.free_bytes))
    throw InputError(fmt::format("problem needs about {:.1f} GB of device memory for verification, {:.1f} GB free",
                                 need / 1e9, double(mem.free_bytes) / 1e9));

  const std::string arch = device_.limits.arch_flag();
  ref_ = std::make_unique<reference::GpuReference>(problem_, arch, math_);  // TEMP: new API
  conv_ref_ = std::make_unique<reference::GpuReference>(conv_only_, arch, math_);  // TEMP: new API
  for (int d = 0; d < draws_; ++d) make_draw(d);

  if (setup.contains("conv_choices"))
    for (auto& [k, v] : setup["conv_choices"].items()) conv_choices_[std::stoi(k)] = v;

  const size_t scrub = size_t(device_.limits.l2_bytes) * 2;
  l2_scrub_ = gpu::DeviceBuffer(scrub);

  info_["device"] = {{"name", device_.name}, {"arch", arch}, {"sm_count", device_.limits.sm_count},
                     {"l2_bytes", device_.limits.l2_bytes}, {"total_mem", device_.total_mem},
                     {"driver_version", device_.driver_version}};
  info_["copy_gbps"] = measure_copy_bandwidth();
  sync_or_lose("setup");
  info_["setup_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
}

Session::~Session() { temp_answers().erase(this); }  // TEMP: frees the answers while the context lives

void Session::make_draw(int d) {
  const auto& c = problem_.conv;
  const CUstream s = stream_.get();
  // Weights and per-channel vectors come from the host generator (it places conv biases on
  // the epilogue's thresholds in the second draw); they depend only on (seed, K, C, R, S),
  // so a one-image copy of the problem keeps the host work small. x is drawn on the device.
  spec::Problem small = problem_;
  small.conv.n = 1;
  const auto host = reference::make_problem_data(small, seed_ + uint64_t(d), d == 0 ? 0.0 : 0.5);

  const std::string sfx = std::to_string(d);
  const size_t x_elems = size_t(c.input_elems());
  CUdeviceptr x = bufs_.ensure("x_nchw" + sfx, 4 * x_elems, *ref_, s);
  ref_->fill_uniform(x, x_elems, (seed_ + uint64_t(d)) * 0x9E3779B97F4A7C15ull, 0.0f, 1.0f, s);
  CUdeviceptr w = bufs_.ensure("w" + sfx, 4 * host.w.size(), *ref_, s);
  FT_CU_CALL(gpu::driver().cuMemcpyHtoD(w, host.w.data(), 4 * host.w.size()));
  const auto wk = to_nhwc(host.w, c.k, c.c, c.r * c.s);
  CUdeviceptr wkp = bufs_.ensure("w_krsc" + sfx, 4 * wk.size(), *ref_, s);
  FT_CU_CALL(gpu::driver().cuMemcpyHtoD(wkp, wk.data(), 4 * wk.size()));
  const size_t chan_n = std::max<size_t>(1, host.chan.size());
  CUdeviceptr chan = bufs_.ensure("chan" + sfx, 4 * chan_n, *ref_, s);
  if (!host.chan.empty()) FT_CU_CALL(gpu::driver().cuMemcpyHtoD(chan, host.chan.data(), 4 * host.chan.size()));

  // The channels-last copy of the input, for plans that read NHWC without making it.
  std::vector<float> hx(x_elems);
  stream_.synchronize();
  FT_CU_CALL(gpu::driver().cuMemcpyDtoH(hx.data(), x, 4 * x_elems));
  const auto hx_nhwc = to_nhwc(hx, c.n, c.c, c.h * c.w);
  CUdeviceptr xn = bufs_.ensure("x_nhwc" + sfx, 4 * x_elems, *ref_, s);
  FT_CU_CALL(gpu::driver().cuMemcpyHtoD(xn, hx_nhwc.data(), 4 * x_elems));

  auto& answers = temp_answers()[this];  // TEMP: new API
  if (answers.size() <= size_t(d)) answers.resize(size_t(d) + 1);
  answers[size_t(d)] = ref_->compute(x, w, chan, /*with_conv=*/true, s);
  sync_or_lose("reference");
}

// Generated kernels take (in, out, chan...): the second argument is the one written.
std::vector<std::string> Session::written_buffers(const codegen::Variant& v) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& st : v.plan) {
    add(st.out);
    if (st.kind == codegen::StepKind::kernel && st.args.size() >= 2) add(st.args[1]);
  }
  add(v.output_buffer);
  return names;
}

bool Session::plan_writes(const codegen::Variant& v, const std::string& name) const {
  const auto w = written_buffers(v);
  return std::find(w.begin(), w.end(), name) != w.end();
}

CUdeviceptr Session::resolve(const Loaded& l, const std::string& name) {
  const auto& c = problem_.conv;
  const std::string d = std::to_string(draw_);
  const CUstream s = stream_.get();
  if (name == "x") return bufs_.ptr((c.in == spec::Layout::nhwc ? "x_nhwc" : "x_nchw") + d);
  if (name == "x_nhwc" || name == "w_krsc") {
    // A plan that makes its own channels-last input (or filters) writes a scratch copy, so a
    // faulty transform cannot corrupt the draw; one that only reads it gets the draw's copy.
    if (plan_writes(l.variant, name)) return bufs_.ensure(name + "_scratch", bufs_.bytes(name + d), *ref_, s);
    return bufs_.ptr(name + d);
  }
  if (name == "w" || name == "chan") return bufs_.ptr(name + d);
  if (name == "out") return bufs_.ensure("out", 4 * size_t(problem_.out_elems()), *ref_, s);
  if (name == "y" || name.rfind("tmp", 0) == 0)
    return bufs_.ensure(name, 4 * size_t(c.conv_out_elems()), *ref_, s);
  throw Error(ExitCode::failure, fmt::format("plan of {} names unknown buffer '{}'", l.variant.name, name));
}

gpu::CudnnConv& Session::conv_for(spec::Layout layout) {
  const int key = layout_key(layout);
  if (auto it = convs_.find(key); it != convs_.end()) return *it->second;
  auto conv = std::make_unique<gpu::CudnnConv>(cudnn_, problem_.conv, layout, math_);
  const size_t ws = conv->max_workspace_bytes();
  if (workspace_.size() < ws) workspace_ = gpu::DeviceBuffer(std::max<size_t>(ws, 256));
  const CUstream s = stream_.get();
  const std::string d0 = "0";
  CUdeviceptr x = bufs_.ptr((layout == spec::Layout::nhwc ? "x_nhwc" : "x_nchw") + d0);
  CUdeviceptr w = bufs_.ptr((layout == spec::Layout::nhwc ? "w_krsc" : "w") + d0);
  CUdeviceptr y = bufs_.ensure("y", 4 * size_t(problem_.conv.conv_out_elems()), *ref_, s);

  if (auto it = conv_choices_.find(key); it != conv_choices_.end()) {
    gpu::ConvAlgoChoice ch;
    ch.algo = it->second.at("algo");
    ch.math_type = it->second.at("math_type");
    ch.time_ms = it->second.value("time_ms", 0.0f);
    ch.algo_name = gpu::fwd_algo_name(ch.algo);
    conv->choose(ch);
  } else {
    auto ranked = conv->find(x, w, y, workspace_.ptr(), workspace_.size());
    // Strict fp32 promises 1e-4: walk cuDNN's ranking until an algorithm meets it on draw 0
    // (FFT and Winograd variants can miss it). TF32 takes the fastest, as PyTorch does.
    if (math_ == gpu::MathMode::fp32) {
      bool found = false;
      for (const auto& ch : ranked) {
        conv->choose(ch);
        conv->forward(x, w, y, workspace_.ptr(), workspace_.size(), 0);
        auto e = conv_ref_->compare(y, layout == spec::Layout::nhwc, *temp_answers()[this][0].conv, s);  // TEMP
        if (e.ok()) {
          found = true;
          break;
        }
      }
      if (!found) throw Error(ExitCode::failure, "no cuDNN algorithm meets the fp32 tolerance");
    }
    const auto& ch = *conv->chosen();
    conv_choices_[key] = {{"algo", ch.algo}, {"math_type", ch.math_type}, {"time_ms", ch.time_ms}};
  }
  info_["conv_choices"][std::to_string(key)] = conv_choices_[key];
  info_["conv_names"][std::to_string(key)] = conv->chosen_name();
  return *convs_.emplace(key, std::move(conv)).first->second;
}

void Session::sync_or_lose(const std::string& what) {
  const CUresult r = gpu::driver().cuCtxSynchronize();
  if (r == CUDA_SUCCESS) return;
  throw ContextLost{fmt::format("{}: {}", what, gpu::cu_result_text(r))};
}

void Session::execute(Loaded& l, bool record_events) {
  const auto& cu = gpu::driver();
  const CUstream s = stream_.get();
  const auto& plan = l.variant.plan;
  if (record_events) {
    while (events_.size() < plan.size() + 1) events_.emplace_back();
    events_[0].record(s);
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    const auto& st = plan[i];
    if (st.kind == codegen::StepKind::cudnn_conv) {
      auto& conv = conv_for(st.conv_layout);
      CUdeviceptr w = resolve(l, st.conv_layout == spec::Layout::nhwc ? "w_krsc" : "w");
      conv.forward(resolve(l, st.in), w, resolve(l, st.out), workspace_.ptr(), workspace_.size(),
                   st.with_bias ? resolve(l, "chan") : 0);
    } else {
      std::vector<CUdeviceptr> vals;
      for (const auto& a : st.args) vals.push_back(resolve(l, a));
      std::vector<void*> ptrs;
      for (auto& v : vals) ptrs.push_back(&v);
      const auto& L = st.launch;
      const CUresult r = cu.cuLaunchKernel(l.functions[i], L.grid[0], L.grid[1], L.grid[2], L.block[0], L.block[1],
                                           L.block[2], L.smem_bytes, s, ptrs.data(), nullptr);
      if (r != CUDA_SUCCESS) {
        if (gpu::is_sticky_error(r)) throw ContextLost{fmt::format("launch of {}: {}", st.kernel_name, gpu::cu_result_text(r))};
        throw gpu::CudaError(r, fmt::format("launch of {} failed: {}", st.kernel_name, gpu::cu_result_text(r)));
      }
    }
    if (record_events) events_[i + 1].record(s);
  }
}

nlohmann::json Session::verify(Loaded& l, const nlohmann::json& policy) {
  const CUstream s = stream_.get();
  const std::string mode = policy.value("mode", "fp32");
  const bool conv_only = l.variant.candidate == "cudnn";
  nlohmann::json draws = nlohmann::json::array();
  nlohmann::json worst = {{"max_abs", 0.0}, {"max_rel", 0.0}, {"rel_l2", 0.0}, {"mismatches", 0}, {"nonfinite", 0}};
  std::string failure;
  for (int d = 0; d < draws_; ++d) {
    draw_ = d;
    // Poison everything the plan writes, so an element it never writes stays NaN.
    for (const auto& name : written_buffers(l.variant)) {
      resolve(l, name);  // allocates scratch buffers on first use
      bufs_.poison(name == "x_nhwc" || name == "w_krsc" ? name + "_scratch" : name, *ref_, s);
    }
    execute(l, false);
    sync_or_lose(l.variant.name);

    const bool nhwc = l.variant.output_layout == spec::Layout::nhwc;
    const CUdeviceptr out = resolve(l, l.variant.output_buffer);
    const reference::RefAnswer& answer = temp_answers()[this][size_t(d)];  // TEMP: new API
    reference::GpuErrorStats e = conv_only ? conv_ref_->compare(out, nhwc, *answer.conv, s)
                                           : ref_->compare(out, nhwc, answer.output, s);
    auto ej = stats_json(e);
    draws.push_back(ej);
    for (const char* k : {"max_abs", "max_rel", "rel_l2"}) worst[k] = std::max(worst[k].get<double>(), ej[k].get<double>());
    worst["mismatches"] = worst["mismatches"].get<uint64_t>() + e.mismatches;
    worst["nonfinite"] = worst["nonfinite"].get<uint64_t>() + e.nonfinite;

    if (std::string g = bufs_.check_guards(*ref_, s); !g.empty() && failure.empty())
      failure = fmt::format("wrote past the end of: {}", g);
    if (!failure.empty()) continue;
    if (e.nonfinite > 0) {
      failure = fmt::format("draw {}: {} elements NaN/inf where the reference is finite (unwritten or overflow), first at {}",
                            d, e.nonfinite, e.first_bad);
    } else if (mode == "fp32" || conv_only) {
      if (mode == "fp32" && e.mismatches > 0)
        failure = fmt::format("draw {}: {} elements outside 1e-4 + 1e-4*|ref| (max abs {:.3g}), first at {}", d,
                              e.mismatches, e.max_abs, e.first_bad);
      else if (mode != "fp32" && e.rel_l2 > 1e-2)
        failure = fmt::format("draw {}: relative L2 error {:.3g} > 1e-2", d, e.rel_l2);
    } else if (mode == "baseline") {
      // cuDNN's own TF32 pipeline defines the tf32 tolerance; only gross errors fail it.
      if (e.rel_l2 > 1e-2) failure = fmt::format("draw {}: relative L2 error {:.3g} > 1e-2", d, e.rel_l2);
    } else {  // tf32: no worse than 2x the baseline's error in this run (fp32 accuracy always passes)
      const double ba = policy.at("max_abs").get<double>(), bl = policy.at("rel_l2").get<double>();
      if (e.mismatches > 0 && (e.max_abs > 2 * ba || e.rel_l2 > 2 * bl))
        failure = fmt::format("draw {}: max abs {:.3g} (bound {:.3g}), rel L2 {:.3g} (bound {:.3g})", d, e.max_abs,
                              2 * ba, e.rel_l2, 2 * bl);
    }
  }
  draw_ = 0;
  nlohmann::json r = {{"draws", draws}, {"accuracy", worst}};
  r["status"] = failure.empty() ? "ok" : "wrong_result";
  if (!failure.empty()) r["reason"] = failure;
  return r;
}

void Session::flush_l2_if_needed() {
  // Working sets below twice the L2 would be served from cache on repeat: scrub it first.
  const double ws = 4.0 * double(problem_.conv.input_elems() + problem_.conv.conv_out_elems() + problem_.out_elems());
  if (ws < 2.0 * double(device_.limits.l2_bytes))
    FT_CU_CALL(gpu::driver().cuMemsetD32Async(l2_scrub_.ptr(), 0x3F800000u, l2_scrub_.size() / 4, stream_.get()));
}

Session::Sample Session::time_once(Loaded& l) {
  flush_l2_if_needed();
  execute(l, true);
  events_[l.variant.plan.size()].synchronize();
  // Untimed steps (one-time parameter transforms, e.g. filters to KRSC) run but don't count.
  Sample smp;
  const auto& plan = l.variant.plan;
  for (size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].timed) continue;
    const double t = gpu::Event::elapsed_ms(events_[i], events_[i + 1]);
    smp.total_ms += t;
    if (plan[i].kind == codegen::StepKind::kernel) smp.kernel_ms += t;
  }
  return smp;
}

nlohmann::json Session::time(Loaded& l, const TimingPolicy& policy) {
  for (int i = 0; i < policy.warmup; ++i) execute(l, false);
  sync_or_lose(l.variant.name);
  std::vector<double> total, kernel;
  double spent = 0;
  while (!timing_done(total, policy, spent)) {
    auto smp = time_once(l);
    total.push_back(smp.total_ms);
    kernel.push_back(smp.kernel_ms);
    spent += smp.total_ms / 1000.0;
  }
  sync_or_lose(l.variant.name);
  const auto t = summarize(total);
  const auto k = summarize(kernel);
  return {{"min", t.min}, {"median", t.median}, {"max", t.max}, {"count", t.count}, {"spread", t.spread()},
          {"kernel_median", k.median}};
}

nlohmann::json Session::run(const nlohmann::json& req) {
  Loaded l;
  l.variant = codegen::variant_from_json(req.at("variant"));
  nlohmann::json reply;
  try {
    if (!l.variant.source.empty()) {
      l.module.emplace(read_file(req.at("cubin_path").get<std::string>()));
      for (const auto& st : l.variant.plan) {
        if (st.kind != codegen::StepKind::kernel) {
          l.functions.push_back(nullptr);
          continue;
        }
        CUfunction f = l.module->function(st.kernel_name);
        if (st.launch.smem_bytes > 48 * 1024) gpu::set_max_dynamic_smem(f, int(st.launch.smem_bytes));
        l.functions.push_back(f);
      }
    } else {
      l.functions.assign(l.variant.plan.size(), nullptr);
    }
    reply = verify(l, req.value("verify", nlohmann::json::object()));
    if (reply["status"] == "ok" && req.value("time", true)) {
      TimingPolicy policy;
      if (req.contains("timing")) {
        const auto& tp = req["timing"];
        policy.min_reps = tp.value("min_reps", policy.min_reps);
        policy.max_reps = tp.value("max_reps", policy.max_reps);
        policy.max_seconds = tp.value("max_seconds", policy.max_seconds);
        policy.target_spread = tp.value("target_spread", policy.target_spread);
      }
      reply["time"] = time(l, policy);
    }
  } catch (const gpu::CudaError& e) {
    if (e.context_lost()) throw ContextLost{e.what()};
    reply = {{"status", "launch_failed"}, {"reason", e.what()}};
  }
  for (const auto& st : l.variant.plan)
    if (st.kind == codegen::StepKind::cudnn_conv)
      reply["conv"] = info_["conv_names"].value(std::to_string(layout_key(st.conv_layout)), "");
  reply["conv_choices"] = info_.value("conv_choices", nlohmann::json::object());
  if (reply["status"] == "ok") loaded_[l.variant.name] = std::move(l);
  return reply;
}

nlohmann::json Session::retime(const nlohmann::json& req) {
  const auto names = req.at("names").get<std::vector<std::string>>();
  const int rounds = req.value("rounds", 20);
  std::map<std::string, std::vector<double>> total, kernel;
  for (const auto& n : names) {
    auto it = loaded_.find(n);
    if (it == loaded_.end()) throw Error(ExitCode::failure, fmt::format("retime: {} was not run in this worker", n));
    execute(it->second, false);  // warm
  }
  sync_or_lose("retime warm-up");
  // A B C A B C ...: drift (clocks, temperature) hits every finalist alike.
  for (int r = 0; r < rounds; ++r)
    for (const auto& n : names) {
      auto smp = time_once(loaded_.at(n));
      total[n].push_back(smp.total_ms);
      kernel[n].push_back(smp.kernel_ms);
    }
  sync_or_lose("retime");
  nlohmann::json out = nlohmann::json::object();
  for (const auto& n : names) {
    auto t = summarize(total[n]);
    auto k = summarize(kernel[n]);
    out[n] = {{"min", t.min}, {"median", t.median}, {"max", t.max}, {"count", t.count}, {"spread", t.spread()},
              {"kernel_median", k.median}};
  }
  return {{"results", out}};
}

double Session::measure_copy_bandwidth() {
  // Device-to-device copy of 1 GiB (less on small cards): bytes read + written over time.
  const size_t bytes = std::min<size_t>(size_t(1) << 30, size_t(device_.total_mem / 16));
  gpu::DeviceBuffer a(bytes), b(bytes);
  const auto& cu = gpu::driver();
  FT_CU_CALL(cu.cuMemsetD32Async(a.ptr(), 0x3F800000u, bytes / 4, stream_.get()));
  gpu::Event e0, e1;
  std::vector<double> t;
  for (int i = 0; i < 13; ++i) {
    e0.record(stream_.get());
    FT_CU_CALL(cu.cuMemcpyDtoDAsync(b.ptr(), a.ptr(), bytes, stream_.get()));
    e1.record(stream_.get());
    e1.synchronize();
    if (i >= 3) t.push_back(gpu::Event::elapsed_ms(e0, e1));
  }
  return 2.0 * double(bytes) / (summarize(t).median * 1e-3) / 1e9;
}

}  // namespace fusetune::tune
