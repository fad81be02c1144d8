// The guided search's prior (tune/cost_model.hpp), GPU-free: what a cuDNN conv step costs before
// the baselines have timed it, and what that does to the order the compile pool starts in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "codegen/design_cost.hpp"
#include "codegen/generate.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "tune/cost_model.hpp"

namespace fusetune::tune {
namespace {

bool has_cudnn_conv(const codegen::Variant& v) {
  return std::any_of(v.plan.begin(), v.plan.end(),
                     [](const codegen::Step& s) { return s.timed && s.kind() == codegen::StepKind::cudnn_conv; });
}

TEST(CostModel, AConvStepNotTimedYetCostsItsFlopFloor) {
  const spec::Problem p = spec::parse("conv2d(n=8,c=32,h=64,w=64,k=64,r=3,s=3,pad=1) | relu");
  const gpu::DeviceLimits dev = *gpu::limits_for_arch("sm_90");
  // 2 x N P Q x K x C R S = 2 x 8*64*64 x 64 x 288 FLOP at 495 TFLOP/s
  EXPECT_NEAR(conv_floor_ms(p.conv, 495), 2.0 * 8 * 64 * 64 * 64 * 288 / 495e9, 1e-12);
  CostInputs before, timed;
  before.dev = timed.dev = dev;
  timed.conv_ms = {{int(spec::Layout::nchw), 0.0}, {int(spec::Layout::nhwc), 0.0}};
  int with_conv = 0;
  for (const auto& v : codegen::generate_variants(p, dev)) {
    if (!has_cudnn_conv(v)) continue;
    ++with_conv;
    // One conv step each: before the baselines it adds its floor to what the kernels cost.
    EXPECT_NEAR(prior_ms(p, v, -1, before) - prior_ms(p, v, -1, timed), conv_floor_ms(p.conv, 495), 1e-9) << v.name;
  }
  EXPECT_GT(with_conv, 10);
}

// The compile pool's first order is made before the baselines run. A pipeline around cuDNN's
// conv does the conv's FLOP and then moves bytes, so it must not rank ahead of the fused convs
// there: when its conv counted 0, the pool spent a cold kernelbench-31 tune's first seconds on
// epilogue kernels (docs/runs/2026-12-04/call95-keep-copies.tar.xz).
TEST(CostModel, BeforeTheBaselinesNoConvPipelineRanksAheadOfTheFusedConvs) {
  const gpu::DeviceLimits dev = *gpu::limits_for_arch("sm_90");
  for (const char* preset : {"kernelbench-31", "kernelbench-32"}) {
    const spec::Problem p = spec::parse(*spec::preset_spec(preset));
    CostInputs in;
    in.dev = dev;
    double fused = std::numeric_limits<double>::infinity(), piped = fused;
    for (const auto& v : codegen::generate_variants(p, dev)) {
      if (v.role() != codegen::Role::solution) continue;
      const double t = prior_ms(p, v, -1, in);
      if (v.candidate == codegen::Candidate::fused_conv) fused = std::min(fused, t);
      if (has_cudnn_conv(v)) piped = std::min(piped, t);
    }
    ASSERT_TRUE(std::isfinite(fused) && std::isfinite(piped)) << preset;
    EXPECT_LT(fused, piped) << preset;
  }
}

// A design whose kernel computes the conv has its cost hook (codegen/design_cost.hpp): every
// fused-conv design generated, TF32 and strict fp32, and the FLOP each counts is its padded GEMM's
// (the figures the name match in cost_model.cpp gave before the hook).
TEST(CostModel, EveryFusedConvDesignHasItsFlopHook) {
  const gpu::DeviceLimits dev = *gpu::limits_for_arch("sm_90");
  const auto round_up = [](int64_t a, int64_t b) { return (a + b - 1) / b * b; };
  std::set<std::string> designs;
  // Few input channels: the gather design is generated too.
  const std::vector<std::string> problems{*spec::preset_spec("kernelbench-31"),
                                          "conv2d(n=2,c=8,h=16,w=16,k=32,r=3,pad=1) | relu"};
  for (size_t run = 0; run < 2 * problems.size(); ++run) {
    const bool strict = run % 2 == 1;
    const spec::Problem p = spec::parse(problems[run / 2]);
    const spec::Conv& c = p.conv;
    codegen::GenerateOptions gen;
    gen.strict_fp32 = strict;
    for (const auto& v : codegen::generate_variants(p, dev, gen)) {
      const codegen::ConvFlopHook hook = codegen::conv_flop_hook(v);
      EXPECT_EQ(hook != nullptr, v.candidate == codegen::Candidate::fused_conv) << v.name;
      if (!hook) continue;
      designs.insert(v.design);
      int64_t bn = 32, cp = 32;
      for (const auto& [n, value] : v.params) {
        if (n == "bn") bn = value;
        if (n == "cp") cp = value;
      }
      const bool halo = v.design.starts_with("fused-conv.halo");
      // the halo design: C rounded up to cp, by R*S rounded up to the K tile's 32/cp taps
      const int64_t taps = 32 / cp;
      const int64_t gemm_k =
          halo ? round_up(c.c, cp) * round_up(c.r * c.s, taps) / taps * 32 / cp : round_up(c.c * c.r * c.s, 32);
      const double products = v.design == "fused-conv.halo3x" ? 3.0 : 1.0;
      EXPECT_EQ(hook(c, v), 2.0 * products * double(c.n * c.p() * c.q()) * double(round_up(c.k, bn)) * double(gemm_k))
          << v.name;
    }
  }
  std::set<std::string> table;
  for (const codegen::DesignCost& d : codegen::design_cost_table()) table.insert(std::string(d.design));
  EXPECT_EQ(designs, table);
}

}  // namespace
}  // namespace fusetune::tune
