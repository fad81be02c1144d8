// Verification sliced by images on a GPU (worker/reference_check.hpp): forced slices
// (FUSETUNE_TEST_REF_SLICE_IMAGES) give every variant the verdict and figures of whole answers, a
// planted bug still fails, and a problem past 2^31 conv outputs, refused before, is tuned with
// every design verified. Skips without a GPU, or (the large problem) without the memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "common/math_mode.hpp"
#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "spec/parser.hpp"
#include "tune/tuner.hpp"
#include "worker/verify_memory.hpp"

namespace {

using fusetune::protocol::Status;
using fusetune::protocol::VariantResult;
constexpr const char* kSliceVar = "FUSETUNE_TEST_REF_SLICE_IMAGES";
constexpr const char* kSlicedNote = "verification sliced by images";

// Sets the test knob for one scope; the workers the tune starts inherit it.
class ForcedSlices {
 public:
  explicit ForcedSlices(int images) { ::setenv(kSliceVar, std::to_string(images).c_str(), 1); }
  ~ForcedSlices() { ::unsetenv(kSliceVar); }
  ForcedSlices(const ForcedSlices&) = delete;
  ForcedSlices& operator=(const ForcedSlices&) = delete;
};

bool noted_sliced(const fusetune::tune::TuneReport& r) {
  for (const auto& n : r.notes)
    if (n.find(kSlicedNote) != std::string::npos) return true;
  return false;
}

bool is_planted(const VariantResult& v) { return v.variant.name.find("planted") != std::string::npos; }

class GpuSlicedVerify : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ::unsetenv(kSliceVar);
  }
  static fusetune::tune::TuneOptions quick(const std::string& plant = "") {
    fusetune::tune::TuneOptions o;
    o.math = fusetune::MathMode::tf32;
    o.worker_exe = FUSETUNE_BINARY;
    o.max_variants = 3;  // a sample of every design (and its planted copies)
    o.quick = true;
    o.retime_rounds = 3;
    o.plant = plant;
    o.variant_timeout_s = 120;
    return o;
  }
};

// The same variants on the same inputs (same seed, the cuDNN conv of the first run), sliced by 3
// images of 8 (3, 3, 2: a shorter last slice with a reference of its own): the same verdicts and,
// up to the order of the L2 sums' additions, the same figures.
TEST_F(GpuSlicedVerify, ForcedSlicesGiveTheWholeAnswersFigures) {
  for (const char* spec : {"conv2d(n=8,c=8,h=20,w=19,k=16,r=3,pad=1) | min(0.5) | add(param[k]) | mul(2)",
                           "conv2d(n=8,c=4,h=12,w=12,k=24,r=3,out=nhwc) | mul(2) | reduce_max",
                           "conv2d(n=8,c=6,h=10,w=9,k=5,r=3,pad=1,in=nhwc) | add(param[k]) | reduce_min | sigmoid"}) {
    SCOPED_TRACE(spec);
    const auto problem = fusetune::spec::parse(spec);
    auto o = quick();
    const auto whole = fusetune::tune::run_tune(problem, o);
    EXPECT_FALSE(noted_sliced(whole));
    o.conv_choices = whole.conv_choices;
    const auto sliced = [&] {
      ForcedSlices knob(3);
      return fusetune::tune::run_tune(problem, o);
    }();
    EXPECT_TRUE(noted_sliced(sliced));
    std::map<std::string, const VariantResult*> by_name;
    for (const auto& v : whole.results) by_name[v.variant.name] = &v;
    size_t compared = 0;
    for (const auto& v : sliced.results) {
      const auto it = by_name.find(v.variant.name);
      if (it == by_name.end() || v.status == Status::not_supported) continue;
      const VariantResult& w = *it->second;
      SCOPED_TRACE(v.variant.name);
      EXPECT_EQ(v.status, w.status) << v.reason << " / " << w.reason;
      if (!fusetune::protocol::cudnn_owned_failure(sliced.results, v)) {
        EXPECT_EQ(v.status, Status::ok) << v.reason;
      }
      EXPECT_NEAR(v.error.max_abs, w.error.max_abs, 1e-12 * w.error.max_abs);
      EXPECT_NEAR(v.error.max_rel, w.error.max_rel, 1e-12 * w.error.max_rel);
      EXPECT_NEAR(v.error.worst_ratio, w.error.worst_ratio, 1e-12 * w.error.worst_ratio);
      EXPECT_NEAR(v.error.rel_l2, w.error.rel_l2, 1e-12 * w.error.rel_l2);
      EXPECT_NEAR(v.error.rel_l2_limit, w.error.rel_l2_limit, 1e-12 * w.error.rel_l2_limit);
      EXPECT_EQ(v.error.unchecked, w.error.unchecked);
      ++compared;
    }
    EXPECT_GE(compared, 4u);
    EXPECT_TRUE(sliced.winner.has_value());
  }
}

// Planted bugs (codegen/planted.hpp) are rejected when the reference comes in slices: an
// unwritten row of image 0 (the first slice), a channel shift, the next channel's bias, the chain
// applied twice, a dropped filter tap; the real variants pass.
TEST_F(GpuSlicedVerify, PlantedBugsStillFailWhenSliced) {
  ForcedSlices knob(3);
  const auto r = fusetune::tune::run_tune(
      fusetune::spec::parse("conv2d(n=8,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)"),
      quick("wrong,bias,row,twice,tap"));
  EXPECT_TRUE(noted_sliced(r));
  size_t planted = 0;
  for (const auto& v : r.results) {
    if (!is_planted(v)) {
      if (!fusetune::protocol::cudnn_owned_failure(r.results, v)) {
        EXPECT_EQ(v.status, Status::ok) << v.variant.name << ": " << v.reason;
      }
      continue;
    }
    ++planted;
    EXPECT_EQ(v.status, Status::wrong_result) << v.variant.name << " was not rejected, worst " << v.error.worst_ratio;
  }
  EXPECT_GE(planted, 5u);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_FALSE(is_planted(r.results[*r.winner]));
}

// 520 x 64 x 256 x 256 = 2.18e9 conv outputs (8.7 GB in fp32): the conv output passes 2^31
// elements, and so does the problem's output without a reduction (with reduce_max it is 34M, but
// the conv-output buffers of the unfused and cuDNN plans and the floors' outputs still pass 2^31).
// Whole float64 answers would take ~70 GB a draw; sliced, every variant of every design verifies.
TEST_F(GpuSlicedVerify, PastTwoToTheThirtyOneConvOutputs) {
  for (const char* spec : {"conv2d(n=520,c=8,h=256,w=256,k=64,r=3,pad=1) | relu",
                           "conv2d(n=520,c=8,h=256,w=256,k=64,r=3,pad=1) | reduce_max(channel)"}) {
    SCOPED_TRACE(spec);
    const auto problem = fusetune::spec::parse(spec);
    ASSERT_GT(problem.conv.conv_out_elems(), int64_t(1) << 31);
    {
      // The tune's own check, with this process's free memory: skip where it would refuse.
      fusetune::gpu::Context ctx(0);
      ctx.make_current();
      const double free_bytes = double(fusetune::gpu::device_memory().free_bytes);
      try {
        const auto m = fusetune::worker::plan_verify_memory(problem, 3, free_bytes);
        std::printf("  %.1f GB free: slices of %lld images, about %.1f GB needed\n", free_bytes / 1e9,
                    static_cast<long long>(m.slice_images), m.need / 1e9);
      } catch (const std::exception& e) {
        GTEST_SKIP() << "not enough device memory: " << e.what();
      }
    }
    auto o = quick();
    o.max_variants = 2;
    o.variant_timeout_s = 600;
    const auto r = fusetune::tune::run_tune(problem, o);
    EXPECT_TRUE(noted_sliced(r));
    bool fused_conv = false, cudnn_based = false;
    for (const auto& v : r.results) {
      if (v.status == Status::not_supported || fusetune::protocol::cudnn_owned_failure(r.results, v)) continue;
      EXPECT_EQ(v.status, Status::ok) << v.variant.name << ": " << v.reason << "\n" << v.log_excerpt;
      if (v.status != Status::ok) continue;
      std::printf("  %-40s %10.3f ms  worst %.3f of the bound\n", v.variant.name.c_str(), v.time.median_ms,
                  v.error.worst_ratio);
      switch (v.variant.candidate) {
        case fusetune::codegen::Candidate::fused_conv: fused_conv = true; break;
        case fusetune::codegen::Candidate::unfused:
        case fusetune::codegen::Candidate::cudnn:
        case fusetune::codegen::Candidate::cudnn_fused: cudnn_based = true; break;
        case fusetune::codegen::Candidate::epilogue: cudnn_based = true; break;  // cuDNN's conv, then ours
        case fusetune::codegen::Candidate::fused_gemm:
        case fusetune::codegen::Candidate::cublaslt_fused: ADD_FAILURE() << "a GEMM variant for a conv problem"; break;
      }
    }
    EXPECT_TRUE(fused_conv) << "no fused-conv variant verified";
    EXPECT_TRUE(cudnn_based) << "no cuDNN-based variant verified";
    EXPECT_TRUE(r.winner.has_value());
  }
}

}  // namespace
