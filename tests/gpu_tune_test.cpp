// `tune` end to end on a GPU, on awkward shapes: every candidate must verify against the
// float64 reference, and planted bad variants must be caught and survived. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "common/math_mode.hpp"
#include "gpu/driver_api.hpp"
#include "spec/parser.hpp"
#include "tune/tie_break.hpp"
#include "tune/tuner.hpp"

namespace {

using fusetune::protocol::Status;

class GpuTune : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  }
  static fusetune::tune::TuneReport tune(const std::string& spec, const std::string& math = "tf32",
                                         const std::string& plant = "", double timeout_s = 60) {
    fusetune::tune::TuneOptions o;
    o.math = *fusetune::parse_math_mode(math);
    o.worker_exe = FUSETUNE_BINARY;
    o.max_variants = 3;
    o.quick = true;
    o.retime_rounds = 3;
    o.plant = plant;
    o.variant_timeout_s = timeout_s;
    return fusetune::tune::run_tune(fusetune::spec::parse(spec), o);
  }
  // Every variant of ours verifies.
  static void expect_all_verified(const fusetune::tune::TuneReport& r) {
    ASSERT_FALSE(r.results.empty());
    for (const auto& v : r.results) {
      if (fusetune::protocol::cudnn_owned_failure(r.results, v)) continue;
      EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason << "\n" << v.log_excerpt;
    }
    EXPECT_TRUE(r.winner.has_value());
    EXPECT_TRUE(r.unfused.has_value());
    EXPECT_TRUE(r.cudnn.has_value());
  }
};

// Shapes that break naive indexing: W=7, K=3, C=1, N=1, stride 2, pad 1, dilation 2, odd sizes.
TEST_F(GpuTune, AwkwardPointwiseShapes) {
  for (const char* spec : {
           "conv2d(n=1,c=1,h=9,w=7,k=3,r=3,stride=2,pad=1,dilation=2) | min(0.5) | add(param[k]) | mul(2)",
           "conv2d(n=3,c=5,h=13,w=7,k=3,r=3,pad=1) | relu | sub(param[k]) | div(3)",
           "conv2d(n=2,c=8,h=16,w=16,k=16,r=1,bias=false) | clamp(-0.2,0.2) | rsub(1)",
           "conv2d(n=2,c=3,h=10,w=9,k=7,r=3,s=2,stride=2x1,pad=1x0) | leaky_relu(0.1) | max(param[k])",
       }) {
    SCOPED_TRACE(spec);
    expect_all_verified(tune(spec));
  }
}

TEST_F(GpuTune, EveryOp) {
  for (const char* spec : {
           "conv2d(n=2,c=4,h=9,w=7,k=6,r=3) | add(0.25) | sub(param[k]) | rsub(0.5) | mul(param[k]) | div(1.5) | "
           "rdiv(3) | min(2) | max(-2)",
           "conv2d(n=2,c=4,h=9,w=7,k=6,r=3) | gelu | gelu_tanh | tanh | sigmoid | silu | mish",
           "conv2d(n=2,c=4,h=9,w=7,k=6,r=3) | hardswish | hardsigmoid | hardtanh | softplus | relu",
           "conv2d(n=2,c=4,h=9,w=7,k=6,r=3) | exp | abs | neg | square | neg | abs | sqrt | add(0.5) | log",
           "conv2d(n=2,c=4,h=9,w=7,k=6,r=3) | softplus(2,5) | hardtanh(-0.3,0.3) | leaky_relu",
       }) {
    SCOPED_TRACE(spec);
    expect_all_verified(tune(spec));
  }
}

TEST_F(GpuTune, EveryReduction) {
  for (const char* spec : {
           "conv2d(n=2,c=3,h=9,w=7,k=5,r=3) | mul(2) | reduce_min(channel)",
           "conv2d(n=1,c=1,h=8,w=8,k=3,r=3,pad=1) | add(param[k]) | reduce_max | sigmoid",
           "conv2d(n=2,c=4,h=12,w=12,k=33,r=3,stride=2) | relu | reduce_sum | mul(0.5)",
           "conv2d(n=2,c=4,h=10,w=7,k=64,r=3,dilation=2) | tanh | reduce_mean | add(1) | sqrt",
       }) {
    SCOPED_TRACE(spec);
    expect_all_verified(tune(spec));
  }
}

TEST_F(GpuTune, LayoutsAndStrictFp32) {
  expect_all_verified(tune("conv2d(n=2,c=8,h=12,w=12,k=16,r=3,in=nhwc) | min(0.5) | add(param[k])"));
  expect_all_verified(tune("conv2d(n=2,c=8,h=12,w=12,k=16,r=3,in=nhwc,out=nhwc) | relu | reduce_min"));
  expect_all_verified(tune("conv2d(n=2,c=8,h=12,w=12,k=16,r=3,out=any) | mul(2) | hardswish"));
  expect_all_verified(tune("conv2d(n=2,c=8,h=12,w=11,k=16,r=3) | min(0.5) | add(param[k]) | mul(2)", "fp32"));
  expect_all_verified(tune("conv2d(n=2,c=8,h=12,w=11,k=16,r=3) | mul(2) | reduce_min", "fp32"));
}

// A planted off-by-one channel index must fail verification; the real variants still win.
TEST_F(GpuTune, PlantedWrongVariantIsRejected) {
  for (const char* spec : {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
                           "conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | mul(2) | reduce_min"}) {
    auto r = tune(spec, "tf32", "wrong");
    size_t planted = 0;
    for (const auto& v : r.results) {
      if (v.variant.name.find("planted") == std::string::npos) {
        if (!fusetune::protocol::cudnn_owned_failure(r.results, v)) {
          EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
        }
        continue;
      }
      ++planted;
      EXPECT_EQ(v.status, fusetune::protocol::Status::wrong_result) << v.variant.name;
      EXPECT_FALSE(v.reason.empty());
    }
    EXPECT_GE(planted, 1u);
    ASSERT_TRUE(r.winner.has_value());
    EXPECT_EQ(r.results[*r.winner].variant.name.find("planted"), std::string::npos);
  }
}

// The subtle bugs a verifier must catch (codegen/planted.hpp): a skipped filter tap, the next
// channel's bias, an unwritten output row, a reduction that drops the last channel, an op chain
// applied twice to one channel. Each is caught under both math modes; real variants still pass
// and win. The unwritten row is caught in the in-place design too: it is verified out of place.
TEST_F(GpuTune, PlantedSubtleBugsAreCaughtInBothMathModes) {
  struct Case {
    const char* spec;
    const char* plant;  // the bugs this problem can show
  };
  // A min over K=2 channels: the left-out channel is the minimum about half the time (over 8
  // channels one dominated and a skipped last channel went unseen on the H200). A channel sum
  // cannot show a bias permutation: no bias plant there.
  const std::vector<Case> cases = {
      {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)", "bias,row,twice,tap"},
      {"conv2d(n=2,c=4,h=12,w=12,k=2,r=3) | mul(2) | reduce_min", "bias,row,reduce,twice,tap"},
      {"conv2d(n=2,c=6,h=10,w=9,k=5,r=3,pad=1) | add(param[k]) | reduce_sum | mul(0.5)", "row,reduce,twice,tap"},
  };
  for (const char* math : {"tf32", "fp32"}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(math) + " " + c.spec);
      auto r = tune(c.spec, math, c.plant);
      std::set<std::string> kinds;
      for (const auto& v : r.results) {
        const auto at = v.variant.name.find("planted-");
        if (at == std::string::npos) {
          if (!fusetune::protocol::cudnn_owned_failure(r.results, v)) {
            EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
          }
          continue;
        }
        kinds.insert(v.variant.name.substr(at + 8));
        EXPECT_EQ(v.status, fusetune::protocol::Status::wrong_result)
            << v.variant.name << " was not rejected: " << fusetune::protocol::status_name(v.status) << ", worst "
            << v.error.worst_ratio << " of the tolerance";
        EXPECT_FALSE(v.reason.empty());
      }
      std::set<std::string> want;
      for (std::string s = c.plant; !s.empty();) {
        const auto comma = s.find(',');
        want.insert(s.substr(0, comma));
        s = comma == std::string::npos ? "" : s.substr(comma + 1);
      }
      EXPECT_EQ(kinds, want);
      ASSERT_TRUE(r.winner.has_value());
      EXPECT_EQ(r.results[*r.winner].variant.name.find("planted"), std::string::npos);
    }
  }
}

// With 8 or 16 input channels cuDNN's fastest NCHW conv was exact fp32 on the H200: a bound taken
// from that baseline rejected every correct TF32 channels-last variant. The derived rule does not.
TEST_F(GpuTune, ChannelsLastTf32PassesWhereTheNchwConvIsExact) {
  for (const char* spec : {"conv2d(n=8,c=8,h=64,w=64,k=64,r=3) | relu",
                           "conv2d(n=4,c=16,h=96,w=96,k=64,r=3) | relu",
                           "conv2d(n=4,c=8,h=64,w=64,k=32,r=3) | mul(2) | reduce_min"}) {
    SCOPED_TRACE(spec);
    auto r = tune(spec);
    size_t channels_last = 0;
    for (const auto& v : r.results) {
      if (!fusetune::protocol::cudnn_owned_failure(r.results, v)) {
        EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
      }
      channels_last += v.variant.design == "epilogue.nhwc" && v.status == fusetune::protocol::Status::ok;
    }
    EXPECT_GE(channels_last, 1u);
    ASSERT_TRUE(r.winner.has_value());
    // The winner is the fastest of the confirmation round, but for a runner-up it ties with
    // (tune/tie_break.hpp): that one may be faster by no more than the measured noise.
    const auto& w = r.results[*r.winner];
    for (size_t i = 0; i < r.results.size(); ++i) {
      const auto& v = r.results[i];
      if (v.time.round != fusetune::protocol::TimeRound::confirmation || v.variant.role() == fusetune::codegen::Role::floor)
        continue;
      if (r.tie.swap && r.runner_up == i) {
        EXPECT_TRUE(fusetune::tune::within_noise(v, w)) << v.variant.name << " won a tie it was not in";
        continue;
      }
      EXPECT_LE(w.time.median_ms, v.time.median_ms) << v.variant.name;
    }
  }
}

// The winner's figures come from the confirmation round, interleaved with the baselines.
TEST_F(GpuTune, WinnerFiguresComeFromTheConfirmationRound) {
  auto r = tune("conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | min(0.5) | add(param[k]) | mul(2)");
  ASSERT_TRUE(r.winner && r.unfused);
  const auto& w = r.results[*r.winner];
  EXPECT_EQ(w.time.round, fusetune::protocol::TimeRound::confirmation);
  EXPECT_EQ(r.results[*r.unfused].time.round, fusetune::protocol::TimeRound::confirmation);
  EXPECT_EQ(w.time.samples.size(), size_t(r.confirm_rounds));
  EXPECT_EQ(r.results[*r.unfused].time.samples.size(), size_t(r.confirm_rounds));
  // A problem this small runs back to back in batches (timer.hpp).
  EXPECT_GT(w.time.batch, 1);
  // Every timed plan reports per-step times that add up to its total.
  for (const auto& v : r.results) {
    if (!v.timed) continue;
    double sum = 0;
    for (double t : v.time.step_median_ms) sum += t;
    EXPECT_NEAR(sum, v.time.median_ms, 0.25 * v.time.median_ms + 1e-3) << v.variant.name;
  }
}

// A full tune's confirmation round (sustained, not quick): the worker times the winner and the
// runner-up taking turns (sustain_round.hpp), both settled in the same rounds, and says so in the
// notes with each plan's window medians; their figures come from that round.
TEST_F(GpuTune, TheWinnerAndTheRunnerUpTakeTurnsInTheSustainedRound) {
  fusetune::tune::TuneOptions o;
  o.worker_exe = FUSETUNE_BINARY;
  o.strategy = fusetune::tune::Strategy::model;
  o.variant_timeout_s = 60;
  const auto r = fusetune::tune::run_tune(fusetune::spec::parse("conv2d(n=4,c=32,h=32,w=32,k=64,r=3,pad=1) | relu | mul(2)"), o);
  ASSERT_TRUE(r.winner && r.runner_up);
  const std::string w = r.results[*r.winner].variant.name, u = r.results[*r.runner_up].variant.name;
  const auto note = [&](const std::string& text) {
    return std::find_if(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  const bool in_turns = note("sustained timing of " + w + " and " + u + " in turns") != r.notes.end() ||
                        note("sustained timing of " + u + " and " + w + " in turns") != r.notes.end();
  EXPECT_TRUE(in_turns) << "no round in turns of " << w << " and " << u;
  for (const std::string& name : {w, u}) {
    const auto n = note("sustained timing of " + name + ": ");
    ASSERT_NE(n, r.notes.end()) << name;
    EXPECT_NE(n->find("window medians"), std::string::npos) << *n;
    EXPECT_EQ(r.results[name == w ? *r.winner : *r.runner_up].time.round, fusetune::protocol::TimeRound::confirmation);
  }
}

// A faulting variant (illegal address) and a hanging one are recorded; the run goes on in a
// fresh worker and still finds a verified winner.
TEST_F(GpuTune, PlantedFaultAndHangAreSurvived) {
  auto r = tune("conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)", "tf32", "fault,hang", 8);
  bool saw_fault = false, saw_hang = false;
  for (const auto& v : r.results) {
    if (v.variant.name.find("planted-fault") != std::string::npos) {
      saw_fault = true;
      EXPECT_EQ(v.status, fusetune::protocol::Status::faulted) << v.reason;
      EXPECT_NE(v.reason.find("ILLEGAL_ADDRESS"), std::string::npos) << v.reason;
    } else if (v.variant.name.find("planted-hang") != std::string::npos) {
      saw_hang = true;
      EXPECT_EQ(v.status, fusetune::protocol::Status::timeout) << v.reason;
    } else if (!fusetune::protocol::cudnn_owned_failure(r.results, v)) {
      EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
    }
  }
  EXPECT_TRUE(saw_fault);
  EXPECT_TRUE(saw_hang);
  EXPECT_GE(r.worker_restarts, 2);
  EXPECT_TRUE(r.winner.has_value());
}

// `tune --devices` on the machine's one GPU: a second worker on it (TuneOptions allows a GPU
// twice; the CLI does not) takes the lanes' path: variants verified in two workers at once,
// each worker's faults its own, and the second worker runs the conv the first one chose.
TEST_F(GpuTune, TwoWorkersShareTheSolutionsAndEveryVariantStillVerifies) {
  for (const char* strategy : {"exhaustive", "model"}) {
    SCOPED_TRACE(strategy);
    fusetune::tune::TuneOptions o;
    o.worker_exe = FUSETUNE_BINARY;
    o.max_variants = 4;
    o.quick = true;
    o.retime_rounds = 3;
    o.plant = "wrong,fault";
    o.strategy = fusetune::tune::parse_strategy(strategy);
    o.more_devices = {0};
    auto r = fusetune::tune::run_tune(
        fusetune::spec::parse("conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | min(0.5) | add(param[k]) | mul(2)"), o);
    EXPECT_EQ(r.devices, (std::vector<int>{0, 0}));
    bool fault = false;
    std::set<std::string> conv_labels;
    for (const auto& v : r.results) {
      if (v.variant.name.find("planted-fault") != std::string::npos) {
        fault = true;
        EXPECT_EQ(v.status, fusetune::protocol::Status::faulted) << v.reason;
      } else if (v.variant.name.find("planted") == std::string::npos &&
                 !fusetune::protocol::cudnn_owned_failure(r.results, v)) {
        EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
      }
      if (v.timed) {
        EXPECT_EQ(v.gpu, 0) << v.variant.name;
      }
    }
    for (const auto& [name, labels] : r.conv_names)
      for (const auto& l : labels)
        if (!l.starts_with("cuDNN graph")) conv_labels.insert(l);
    // One conv choice per layout, whichever worker ran the variant.
    EXPECT_LE(conv_labels.size(), 2u);
    if (std::string(strategy) == "exhaustive") {
      EXPECT_TRUE(fault);
      EXPECT_GE(r.worker_restarts, 1);
    }
    EXPECT_TRUE(r.winner.has_value());
  }
}

}  // namespace
