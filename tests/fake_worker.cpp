// A stand-in for `fusetune __worker` that needs no GPU: it speaks the worker protocol
// (tune/protocol.hpp) and answers with deterministic, synthetic figures, so the tuner's phases
// (baselines, measure, finalists per design, confirmation) are tested GPU-free.
//   every variant verifies, except names containing "planted" (wrong_result) and "fault"
//   (the worker says faulted and exits, as a lost context makes it)
//   a conv step takes 1.0 ms (NCHW) or 0.5 ms (NHWC); a kernel step 0.1 ms plus a per-variant
//   amount from a hash of its name, a cuDNN graph step 0.4 ms plus one; re-timing adds +-1%
//   that depends on the round. `engines` lists three configurations, the last not built.
// For `tune --devices` tests, from the environment:
//   FUSETUNE_FAKE_GPUS=N      the machine has N GPUs (default 1); a higher ordinal is refused
//   FUSETUNE_FAKE_ODD_GPU=D   GPU D is another kind ("Fake A100", sm_80)
//   FUSETUNE_FAKE_RUN_MS=T    each `run` takes T ms more (so runs on two GPUs overlap)
//   FUSETUNE_FAKE_SLOW_GPU=D  ... and 4 T on GPU D (its answers come last)
//   FUSETUNE_FAKE_HANG_GPU=D  GPU D's runs never answer (a hung variant)
//   FUSETUNE_FAKE_LOG=FILE    each `run` appends "<device> <variant> <start> <end>" (steady-clock
//                             microseconds) to FILE: which GPU ran what, and when
//   FUSETUNE_FAKE_AHEAD_LOG=FILE  each `run` appends "ahead <device> <variant> <plan>" to FILE for
//                             each plan it is asked to build ahead (fusetune::protocol::RunRequest::prebuild), then
//                             "run <device> <variant>"; each `retime` appends "retime <device>
//                             sustained|interleaved"
//   FUSETUNE_FAKE_POLICY_LOG=FILE  each `run` appends "<variant> <behind_ms>" (its first pass's
//                             out-of-reach cut, fusetune::protocol::TimingPolicy::behind_ms) to FILE
//   FUSETUNE_FAKE_SOLUTION_MS=T    every solution's kernel steps take T ms more (solutions as slow
//                             as the baselines: within their reach)
//   FUSETUNE_FAKE_NCHW_CONV_MS=T   the NCHW conv step takes T ms instead of 1.0
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "common/fnv1a.hpp"
#include "gpu/device_limits.hpp"
#include "protocol/limits_json.hpp"
#include "protocol/protocol.hpp"

using namespace fusetune;
using namespace fusetune::protocol;

namespace {

double name_hash(const std::string& s) {
  return double(Fnv1a64(Fnv1a64::kShortBasis).add(s).value() % 1000) / 1000.0;  // [0, 1)
}

constexpr int kFakeSustainedSamples = 41;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::atoi(v) : fallback;
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

fusetune::protocol::TimeFigures figures(const codegen::Variant& v, double jitter, fusetune::protocol::TimeRound round) {
  fusetune::protocol::TimeFigures t;
  for (const auto& st : v.plan) {
    double ms = 0;
    if (st.timed) {
      switch (st.kind()) {
        case codegen::StepKind::cudnn_conv:
          ms = st.conv().layout == spec::Layout::nhwc ? 0.5 : 1.0;
          if (const char* nchw = std::getenv("FUSETUNE_FAKE_NCHW_CONV_MS"); nchw && st.conv().layout != spec::Layout::nhwc)
            ms = std::atof(nchw);
          break;
        case codegen::StepKind::kernel:
          ms = 0.1 + 0.2 * name_hash(v.name + st.kernel().name);
          if (const char* add = std::getenv("FUSETUNE_FAKE_SOLUTION_MS"); add && v.role() == codegen::Role::solution)
            ms += std::atof(add);
          break;
        case codegen::StepKind::cudnn_graph: ms = 0.4 + 0.2 * name_hash(v.name); break;
        case codegen::StepKind::gemm:
        case codegen::StepKind::conv_nd: ms = 0.8; break;  // version-2 main steps (never tuned yet)
      }
    }
    ms *= 1 + jitter;
    t.step_median_ms.push_back(ms);
    t.median_ms += ms;
    if (st.kind() == codegen::StepKind::kernel) t.kernel_median_ms += ms;
  }
  t.min_ms = t.max_ms = t.median_ms;
  t.count = 10;
  t.round = round;
  return t;
}

}  // namespace

int main() {
  fusetune::protocol::ConvChoices choices;  // as a real worker: the ones it was set up with, else its own
  int device = 0;       // the GPU this worker's session is on
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto req = nlohmann::json::parse(line);
    const std::string cmd = req.at("cmd");
    nlohmann::json reply;
    if (cmd == "device") {
      const int d = req.value("device", 0);
      const int count = env_int("FUSETUNE_FAKE_GPUS", 1);
      if (d < 0 || d >= count) {
        reply = {{"error", "no GPU with index " + std::to_string(d)}, {"exit_code", 2}};
      } else {
        const bool odd = d == env_int("FUSETUNE_FAKE_ODD_GPU", -1);
        gpu::DeviceLimits l;
        l.name = odd ? "Fake A100" : "Fake H200";
        if (odd) l.cc_minor = 0, l.cc_major = 8;
        reply = {{"limits", fusetune::protocol::limits_to_json(l)}, {"name", l.name}, {"total_mem", int64_t(1) << 37},
                 {"driver_version", 13000}, {"driver", "13.0"}, {"pci_bus_id", "0000:0" + std::to_string(d) + ":00.0"},
                 {"count", count}};
      }
    } else if (cmd == "setup") {
      const fusetune::protocol::SetupRequest setup = fusetune::protocol::setup_request_from_json(req);
      device = setup.device;
      choices = setup.conv_choices;
      if (choices.empty()) choices[0] = fusetune::protocol::ConvChoice{1, 1, 0.1f, "FAKE_ALGO (tf32)", std::nullopt, {}};
      fusetune::protocol::SetupReply r;
      r.device = {{"name", "Fake H200"}};
      // As a real worker: when it began the setup, on the steady clock both processes share.
      r.begun_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      r.copy_gbps = 4000;
      reply = to_json(r);
    } else if (cmd == "run") {
      const fusetune::protocol::RunRequest r = fusetune::protocol::run_request_from_json(req);
      if (r.variant.name.find("fault") != std::string::npos) {
        std::cout << nlohmann::json{{"status", "faulted"}, {"reason", "fake CUDA_ERROR_ILLEGAL_ADDRESS"}}.dump()
                  << std::endl;
        return 3;
      }
      const int64_t started = now_us();
      if (device == env_int("FUSETUNE_FAKE_HANG_GPU", -1)) std::this_thread::sleep_for(std::chrono::hours(1));
      if (const int ms = env_int("FUSETUNE_FAKE_RUN_MS", 0); ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(device == env_int("FUSETUNE_FAKE_SLOW_GPU", -1) ? 4 * ms : ms));
      if (const char* log = std::getenv("FUSETUNE_FAKE_LOG"))
        std::ofstream(log, std::ios::app) << device << ' ' << r.variant.name << ' ' << started << ' ' << now_us() << '\n';
      if (const char* log = std::getenv("FUSETUNE_FAKE_POLICY_LOG"))
        std::ofstream(log, std::ios::app) << r.variant.name << ' ' << r.timing.behind_ms << '\n';
      if (const char* log = std::getenv("FUSETUNE_FAKE_AHEAD_LOG")) {
        std::ofstream f(log, std::ios::app);
        for (const auto& v : r.prebuild) f << "ahead " << device << ' ' << r.variant.name << ' ' << v.name << '\n';
        f << "run " << device << ' ' << r.variant.name << '\n';
      }
      // As a real worker: the tuner's first GPU's choices for layouts it has none of.
      choices.insert(r.conv_choices.begin(), r.conv_choices.end());
      fusetune::protocol::RunReply out;
      out.conv_choices = choices;
      if (r.variant.name.find("planted") != std::string::npos) {
        out.status = fusetune::protocol::Status::wrong_result;
        out.reason = "draw 0: planted";
        // As an unwritten element makes them: infinite figures must cross the protocol.
        out.error.max_abs = std::numeric_limits<double>::infinity();
        out.error.worst_ratio = std::numeric_limits<double>::infinity();
        out.error.rel_l2 = std::numeric_limits<double>::quiet_NaN();
      } else if (r.time) {
        out.timed = true;
        out.time = figures(r.variant, 0, fusetune::protocol::TimeRound::first_pass);
      }
      reply = to_json(out);
    } else if (cmd == "retime") {
      const fusetune::protocol::RetimeRequest r = fusetune::protocol::retime_request_from_json(req);
      if (const char* log = std::getenv("FUSETUNE_FAKE_AHEAD_LOG")) {
        std::ofstream f(log, std::ios::app);
        f << "retime " << device << ' ' << (r.sustained ? "sustained" : "interleaved") << ' ' << r.turns;
        for (const auto& e : r.entries) f << ' ' << e.variant.name;
        f << '\n';
      }
      fusetune::protocol::RetimeReply out;
      for (const auto& e : r.entries) {
        fusetune::protocol::TimeFigures t = figures(e.variant, 0, r.round);
        // Sustained: the samples of the settled figure (kFakeSustainedSamples here), else `rounds`.
        t.count = r.sustained ? kFakeSustainedSamples : r.rounds;
        for (int i = 0; i < t.count; ++i)
          t.samples.push_back(figures(e.variant, 0.01 * ((i % 3) - 1), r.round).median_ms);
        out.results[e.variant.name] = t;
      }
      reply = to_json(out);
    } else if (cmd == "engines") {
      // Two configurations cuDNN builds and one it refuses, like a real list; a template named
      // "refused" (none in codegen) would be refused whole.
      const fusetune::protocol::EnginesRequest r = fusetune::protocol::engines_request_from_json(req);
      fusetune::protocol::EnginesReply out;
      const auto entry = [](int64_t engine, std::vector<std::pair<int64_t, int64_t>> knobs, const char* name,
                            bool built, const char* reason) {
        fusetune::protocol::EngineEntry e;
        e.key.engine = engine;
        e.key.knobs = std::move(knobs);
        e.name = name;
        e.built = built;
        e.reason = reason;
        return e;
      };
      out.engines.push_back(entry(7, {{2, 1}, {24, 29}}, "eng7_k2=1_k24=29", true, ""));
      out.engines.push_back(entry(3, {}, "eng3", true, ""));
      out.engines.push_back(entry(9, {{1, 0}}, "eng9_k1=0", false, "fake CUDNN_STATUS_NOT_SUPPORTED"));
      if (r.variant.name.find("refused") != std::string::npos) {
        out = {};
        out.refused = true;
        out.reason = "fake: no engine supports the graph";
      }
      reply = to_json(out);
    } else if (cmd == "quit") {
      std::cout << nlohmann::json{{"ok", true}}.dump() << std::endl;
      return 0;
    }
    std::cout << reply.dump() << std::endl;
  }
  return 0;
}
