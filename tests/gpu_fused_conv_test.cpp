// Every fused-conv variant (both designs: the im2col gather of fused_conv.cu and the halo tile of
// fused_conv_halo.cu) verifies against the float64 reference on shapes that break tiling: K not
// a multiple of any tile, C not a multiple of 32, 8 or 4, C = 1, stride 2, padding, dilation,
// R != S, N = 1, W odd (4-byte halo copies) and W = 2 mod 4 (8-byte), more tiles than SMs (the
// persistent blocks stride over tiles), every op, every reduction, NHWC in and out, out=any.
// The tuner runs only the fused-conv variants (plus the baselines it always runs), in the
// worker, as `tune` does. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "codegen/generate.hpp"
#include "common/math_mode.hpp"
#include "gpu/device_limits.hpp"
#include "gpu/driver_api.hpp"
#include "spec/parser.hpp"
#include "tune/compile_all.hpp"
#include "tune/tuner.hpp"

namespace {

using fusetune::protocol::Status;

class GpuFusedConv : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  }

  // The fused-conv variants generated for the problem in a math mode.
  static std::set<std::string> fused_conv_names(const fusetune::spec::Problem& problem, const std::string& math) {
    std::set<std::string> names;
    fusetune::codegen::GenerateOptions gen;
    gen.strict_fp32 = math == "fp32";
    for (const auto& v : fusetune::codegen::generate_variants(problem, *fusetune::gpu::limits_for_arch("sm_90"), gen))
      if (v.candidate == fusetune::codegen::Candidate::fused_conv) names.insert(v.name);
    return names;
  }

  // A quick tune (correctness, not figures) of these variants and the baselines, in the worker.
  static fusetune::tune::TuneOptions quick_options(const std::string& math, const std::set<std::string>& names) {
    fusetune::tune::TuneOptions o;
    o.math = *fusetune::parse_math_mode(math);
    o.worker_exe = FUSETUNE_BINARY;
    o.quick = true;
    o.retime_rounds = 3;
    o.floors = false;
    o.variant_timeout_s = 60;
    o.on_device = [names](const nlohmann::json& device) {
      fusetune::tune::TuneDecision d;
      d.only = names;
      const auto limits = device.at("limits");
      EXPECT_EQ(limits.at("cc_major").get<int>(), 9) << "fused-conv needs an sm_90 GPU";
      return d;
    };
    return o;
  }

  // Runs every fused-conv variant of the spec; returns the designs that verified.
  static std::set<std::string> expect_every_variant_verifies(const std::string& spec_text,
                                                              const std::string& math = "tf32") {
    const fusetune::spec::Problem problem = fusetune::spec::parse(spec_text);
    const std::set<std::string> names = fused_conv_names(problem, math);
    EXPECT_FALSE(names.empty()) << "no fused-conv variant for " << spec_text;
    const auto r = fusetune::tune::run_tune(problem, quick_options(math, names));
    std::set<std::string> ran, verified;
    for (const auto& v : r.results) {
      if (v.variant.candidate != fusetune::codegen::Candidate::fused_conv) continue;
      ran.insert(v.variant.name);
      EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason << "\n" << v.log_excerpt;
      if (v.status == fusetune::protocol::Status::ok) {
        verified.insert(v.variant.design);
        std::printf("  %-34s %8.4f ms  worst %.3f of the bound\n", v.variant.name.c_str(), v.time.median_ms,
                    v.error.worst_ratio);
      }
    }
    EXPECT_EQ(ran, names);
    return verified;
  }
};

TEST_F(GpuFusedConv, AwkwardGeometry) {
  for (const char* spec : {
           // C = 5, K = 76, W odd, R != S, stride 2x1, pad, dilation 1x2
           "conv2d(n=2,c=5,h=17,w=19,k=76,r=3,s=2,stride=2x1,pad=1,dilation=1x2) | add(param[k]) | relu",
           // C = 40 (a partial chunk), W = 30 (8-byte halo copies), pad 1
           "conv2d(n=2,c=40,h=30,w=30,k=64,r=3,pad=1) | gelu | clamp(-1,1)",
           // C = 70, 1 x 5 filters, stride 2, pad 2, W = 33
           "conv2d(n=3,c=70,h=21,w=33,k=40,r=1,s=5,stride=2,pad=2) | sigmoid",
           // K = 200 past one 128 tile, NHWC out, W = 68
           "conv2d(n=2,c=64,h=36,w=68,k=200,r=3,pad=1,out=nhwc) | add(param[k]) | mish",
           // more tiles than SMs: blocks stride over tiles, the halo buffers alternate across them
           "conv2d(n=4,c=64,h=130,w=130,k=128,r=3) | min(0.5) | add(param[k]) | mul(2)",
           // out=any (NHWC), C = 48
           "conv2d(n=2,c=48,h=32,w=32,k=48,r=3,out=any) | silu",
           // C = 16 (both designs), K = 24; the halo's K tiles of 2 taps x 16 channels (c16)
           "conv2d(n=2,c=16,h=33,w=31,k=24,r=3,pad=1) | tanh",
       }) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(expect_every_variant_verifies(spec).count("fused-conv.halo")) << spec;
  }
}

// A K tile of the halo design holding 32/cp taps of cp channels: below 17 input channels (c4, c8,
// c16; padding taps past R*S): every such variant verifies, next to the one-tap tiles (c32), in
// TF32 and in 3xTF32 (the mode KernelBench's C = 8 problems need: #57, #69, #71, #87); and past
// 16 channels where a halo of 32 channel planes outgrows shared memory (chunks of 16, c16). (C = 5
// with R*S = 6 and C = 16 are in AwkwardGeometry.)
TEST_F(GpuFusedConv, SeveralTapsPerKTile) {
  struct Case {
    const char* spec;
    const char* math;
  };
  for (const Case& c : {// KernelBench's C = 8 convs: 4 taps per K tile, 3 K tiles (the last 3 taps zero)
                        Case{"conv2d(n=4,c=8,h=40,w=42,k=64,r=3) | relu | hardswish", "fp32"},
                        Case{"conv2d(n=4,c=8,h=40,w=42,k=64,r=3) | relu | hardswish", "tf32"},
                        // C = 3: 8 taps x 4 channels, 7 x 7 filters at stride 2 (49 taps in 7 K
                        // tiles, the last with 7 zero taps), as a ResNet stem
                        Case{"conv2d(n=2,c=3,h=37,w=38,k=64,r=7,stride=2,pad=3) | relu", "tf32"},
                        // past 16 channels where a 32-plane halo does not fit: chunks of 16, 2 taps
                        // per K tile (ResNet-50's stride-2 3 x 3 of 256 channels)
                        Case{"conv2d(n=4,c=256,h=28,w=28,k=256,r=3,stride=2,pad=1) | relu", "tf32"},
                        // (3xTF32's doubled filter stages: at K = 256 not even c16 fits; at 128 it does)
                        Case{"conv2d(n=4,c=256,h=28,w=28,k=128,r=3,stride=2,pad=1) | relu", "fp32"}}) {
    SCOPED_TRACE(std::string(c.math) + " " + c.spec);
    const fusetune::spec::Problem problem = fusetune::spec::parse(c.spec);
    size_t packed = 0;
    for (const auto& name : fused_conv_names(problem, c.math))
      packed += name.starts_with("fused-conv.halo") && name.find(".c32") == std::string::npos;
    EXPECT_GT(packed, 0u) << "no variant with several taps per K tile";
    EXPECT_TRUE(expect_every_variant_verifies(c.spec, c.math).count(std::string(c.math) == "fp32" ? "fused-conv.halo3x"
                                                                                                  : "fused-conv.halo"));
  }
}

// NHWC output through e0's pixel-major staging tile (16-byte stores where K % 4 == 0, four
// scalar ones elsewhere) and e1's: K a multiple of the tile, K partial and odd.
TEST_F(GpuFusedConv, NhwcOutputEveryTileAndOddK) {
  for (const char* spec : {
           // python/examples/four_blocks.py's first block, smaller: per-channel mul and add, relu
           "conv2d(n=2,c=32,h=40,w=40,k=64,r=3,pad=1,out=nhwc) | mul(param[k]) | add(param[k]) | relu",
           // K = 37: odd, one partial tile; R != S
           "conv2d(n=2,c=40,h=17,w=19,k=37,r=3,s=2,pad=1,out=nhwc) | relu",
           // K = 130 (K % 4 = 2) past one tile, W odd (a stride-2 3x3 conv has no halo variant yet)
           "conv2d(n=3,c=64,h=33,w=35,k=130,r=3,pad=1,out=nhwc) | sigmoid",
       }) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(expect_every_variant_verifies(spec).count("fused-conv.halo")) << spec;
  }
}

TEST_F(GpuFusedConv, EveryReductionAndTheOpsAfterIt) {
  for (const char* spec : {
           "conv2d(n=3,c=1,h=20,w=20,k=200,r=3) | mul(2) | reduce_min(channel)",
           "conv2d(n=1,c=96,h=20,w=20,k=256,r=3,dilation=2) | reduce_sum(channel) | mul(0.5)",
           "conv2d(n=4,c=33,h=47,w=46,k=130,r=3,stride=2,pad=1) | add(param[k]) | reduce_max(channel) | tanh",
           "conv2d(n=1,c=64,h=40,w=44,k=128,r=3,pad=1) | relu | reduce_mean(channel) | add(1) | sqrt",
           // more tiles than SMs, with a reduction (kernelbench-32's epilogue)
           "conv2d(n=8,c=64,h=66,w=66,k=128,r=3) | mul(2) | reduce_min(channel)",
       }) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(expect_every_variant_verifies(spec).count("fused-conv.halo")) << spec;
  }
}

// Two epilogue warpgroups (e2, for chains of two or more costly ops): each empties one
// consumer's buffer; with a reduction, two threads share a pixel and meet in shared memory.
TEST_F(GpuFusedConv, TwoEpilogueWarpgroupsEveryOutputAndReduction) {
  for (const char* spec : {
           // K = 130: a partial second column tile; more tiles than SMs
           "conv2d(n=4,c=64,h=66,w=66,k=130,r=3,pad=1) | mish | mish",
           // NHWC output, K = 72, C = 40 (a partial chunk), W odd
           "conv2d(n=2,c=40,h=30,w=31,k=72,r=3,pad=1,out=nhwc) | gelu | add(param[k]) | softplus",
           // a reduction after two costly ops, K = 200, more tiles than SMs, the ops after it
           "conv2d(n=8,c=64,h=50,w=66,k=200,r=3) | silu | tanh | reduce_mean(channel) | mul(3)",
           "conv2d(n=2,c=33,h=19,w=21,k=76,r=3,s=2,pad=1) | sigmoid | exp | reduce_max(channel)",
       }) {
    SCOPED_TRACE(spec);
    const auto names = fused_conv_names(fusetune::spec::parse(spec), "tf32");
    EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.ends_with(".e2"); }))
        << "no e2 variant for " << spec;
    EXPECT_TRUE(expect_every_variant_verifies(spec).count("fused-conv.halo")) << spec;
  }
}

TEST_F(GpuFusedConv, EveryOp) {
  for (const char* spec : {
           "conv2d(n=2,c=36,h=40,w=44,k=48,r=3) | add(0.25) | sub(param[k]) | rsub(0.5) | mul(param[k]) | div(1.5) | "
           "rdiv(3) | min(2) | max(-2)",
           "conv2d(n=2,c=36,h=40,w=44,k=48,r=3) | gelu | gelu_tanh | tanh | sigmoid | silu | mish",
           "conv2d(n=2,c=36,h=40,w=44,k=48,r=3) | hardswish | hardsigmoid | hardtanh | softplus | relu",
           "conv2d(n=2,c=36,h=40,w=44,k=48,r=3) | exp | abs | neg | square | neg | abs | sqrt | add(0.5) | log",
           "conv2d(n=2,c=36,h=40,w=44,k=48,r=3,bias=false) | softplus(2,5) | hardtanh(-0.3,0.3) | leaky_relu",
       }) {
    SCOPED_TRACE(spec);
    EXPECT_TRUE(expect_every_variant_verifies(spec).count("fused-conv.halo")) << spec;
  }
}

// NHWC input, and NCHW input whose halo design has no point (C = 40 padded to 64 per tap makes
// its packed filters outgrow this small problem): the gather design.
TEST_F(GpuFusedConv, NhwcInputAndHaloLessShapesTakeTheGatherDesign) {
  for (const char* spec : {"conv2d(n=2,c=8,h=12,w=12,k=16,r=3,in=nhwc,out=nhwc) | relu",
                           "conv2d(n=2,c=40,h=30,w=30,k=72,r=3,in=nhwc) | add(param[k]) | reduce_min",
                           "conv2d(n=2,c=40,h=17,w=19,k=76,r=3) | relu"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(expect_every_variant_verifies(spec), (std::set<std::string>{"fused-conv"})) << spec;
  }
}

// --math fp32: the 3xTF32 variants verify under the fp32 rule (1e-4 + 1e-4 |ref| on every
// element of both draws), where the TF32 ones were all wrong_result.
TEST_F(GpuFusedConv, ThreeTf32PassesTheFp32Rule) {
  for (const char* spec : {"conv2d(n=2,c=64,h=36,w=68,k=200,r=3,pad=1) | add(param[k]) | mish",
                           "conv2d(n=8,c=64,h=66,w=66,k=128,r=3) | mul(2) | reduce_min(channel)",
                           "conv2d(n=4,c=64,h=130,w=130,k=128,r=3) | min(0.5) | add(param[k]) | mul(2)"}) {
    SCOPED_TRACE(spec);
    EXPECT_EQ(expect_every_variant_verifies(spec, "fp32"), (std::set<std::string>{"fused-conv.halo3x"})) << spec;
  }
}

// Inputs of large dynamic range whose sums cancel in part (x over 2^-20 .. 2^20, filters in
// (-0.4 b, b): reference/problem_data.hpp's make_wide_range_data), under the fp32 rule: every
// 3xTF32 variant passes on both draws, and every TF32 halo variant, compiled as `--math tf32`
// compiles it and run in the same tune, fails. A CPU simulation of the same data
// (bench/accuracy/wide_range_sim.py) gave fp32 and 3xTF32 products a 50x margin under the rule
// and TF32 products ~20% of outputs over it.
TEST_F(GpuFusedConv, WideRangeInputsTellThreeTf32FromTf32) {
  const auto problem = fusetune::spec::parse("conv2d(n=2,c=64,h=20,w=36,k=64,r=3,pad=1) | add(param[k]) | mul(0.5)");
  const auto limits = *fusetune::gpu::limits_for_arch("sm_90");
  std::vector<fusetune::codegen::Variant> tf32;
  for (const auto& v : fusetune::codegen::generate_variants(problem, limits))  // TF32: not strict_fp32
    if (v.design == "fused-conv.halo") tf32.push_back(v);
  ASSERT_FALSE(tf32.empty());
  fusetune::tune::CompileAllOptions copts;
  copts.arch = limits.arch_flag();
  auto o = quick_options("fp32", fused_conv_names(problem, "fp32"));
  o.injected = fusetune::tune::compile_all(tf32, limits, copts);
  for (const auto& r : o.injected) ASSERT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason;
  o.inputs = fusetune::protocol::InputRange::wide;
  const auto r = fusetune::tune::run_tune(problem, o);
  int split = 0, plain = 0;
  for (const auto& v : r.results) {
    if (v.variant.design == "fused-conv.halo3x") {
      ++split;
      EXPECT_EQ(v.status, fusetune::protocol::Status::ok) << v.variant.name << ": " << v.reason;
      std::printf("  %-34s %s, worst %.3f of the fp32 bound\n", v.variant.name.c_str(),
                  std::string(fusetune::protocol::status_name(v.status)).c_str(), v.error.worst_ratio);
    } else if (v.variant.design == "fused-conv.halo") {
      ++plain;
      EXPECT_EQ(v.status, fusetune::protocol::Status::wrong_result) << v.variant.name << " (TF32 products) passed the fp32 rule";
      std::printf("  %-34s %s, worst %.1f of the fp32 bound\n", v.variant.name.c_str(),
                  std::string(fusetune::protocol::status_name(v.status)).c_str(), v.error.worst_ratio);
    }
  }
  EXPECT_GT(split, 0);
  EXPECT_EQ(plain, int(tf32.size()));
}


// Issue 41: the bugs planted inside the fused convs (codegen/planted.hpp's deep plants: a skipped
// channel chunk, the bottom halo row read as padding, a tap with the wrong filter, a stale filter
// stage, truncation to TF32, 3xTF32's dropped small term, a min/max reduction started from 0, the
// last column tile left out of the reduction) each fail verification, on both draws together
// (torch.rand-like and signed), in every design they apply to; the variants they were made from
// pass. Shapes: K = 72 (partial column tiles), padding + stride 2, C = 16 (the gather design too, a
// single chunk), and the 3xTF32 design under --math fp32.
TEST_F(GpuFusedConv, PlantedBugsInsideTheFusedConvsAreRejected) {
  struct Case {
    const char* spec;
    const char* math;
  };
  for (const Case& c : {Case{"conv2d(n=2,c=64,h=34,w=34,k=72,r=3) | mul(2) | reduce_min(channel)", "tf32"},
                        Case{"conv2d(n=2,c=64,h=34,w=66,k=128,r=3,pad=1,stride=2) | min(0.5) | add(param[k]) | mul(2)",
                             "tf32"},
                        Case{"conv2d(n=2,c=16,h=33,w=31,k=24,r=3,pad=1) | mul(2) | reduce_max(channel)", "tf32"},
                        // several taps per K tile (c8): a wrong tap or a stale stage in them
                        Case{"conv2d(n=2,c=8,h=34,w=34,k=64,r=3) | relu | hardswish", "tf32"},
                        Case{"conv2d(n=2,c=64,h=34,w=66,k=128,r=3,pad=1) | add(param[k]) | mul(2)", "fp32"}}) {
    SCOPED_TRACE(std::string(c.math) + " " + c.spec);
    const fusetune::spec::Problem problem = fusetune::spec::parse(c.spec);
    fusetune::codegen::GenerateOptions gen;
    gen.strict_fp32 = std::string(c.math) == "fp32";
    gen.plant = "deep";
    std::set<std::string> planted, bases;
    for (const auto& v : fusetune::codegen::generate_variants(problem, *fusetune::gpu::limits_for_arch("sm_90"), gen)) {
      const auto at = v.name.find(".planted-");
      if (at == std::string::npos || v.candidate != fusetune::codegen::Candidate::fused_conv) continue;
      planted.insert(v.name);
      bases.insert(v.name.substr(0, at));
    }
    ASSERT_FALSE(planted.empty());
    std::set<std::string> names = planted;
    names.insert(bases.begin(), bases.end());
    auto o = quick_options(c.math, names);
    o.plant = "deep";
    const auto r = fusetune::tune::run_tune(problem, o);
    std::set<std::string> ran;
    for (const auto& v : r.results) {
      if (!names.contains(v.variant.name)) continue;
      ran.insert(v.variant.name);
      const bool bug = planted.contains(v.variant.name);
      std::printf("  %-52s %-12s worst %.3g of the bound, rel-L2 %.3g of the limit\n", v.variant.name.c_str(),
                  std::string(fusetune::protocol::status_name(v.status)).c_str(), v.error.worst_ratio,
                  v.error.rel_l2_limit > 0 ? v.error.rel_l2 / v.error.rel_l2_limit : 0.0);
      if (bug) {
        EXPECT_EQ(v.status, Status::wrong_result) << v.variant.name << " was not rejected";
        // Truncation fails by a margin, not by luck: at least 3x the rel-L2 limit on its worst
        // draw (every draw is judged, failed or not: worker/verifier.cpp).
        if (v.variant.name.ends_with(".planted-trunc") && v.error.rel_l2_limit > 0) {
          EXPECT_GE(v.error.rel_l2 / v.error.rel_l2_limit, 3.0) << v.variant.name << ": " << v.reason;
        }
      } else {
        EXPECT_EQ(v.status, Status::ok) << v.variant.name << ": " << v.reason;
      }
    }
    EXPECT_EQ(ran, names);
  }
}

}  // namespace
