// The fused-conv halo design (GPU-free): which problems get it, its search space on the presets
// and awkward shapes, the constraints every point keeps (recomputed here from the template's
// shared-memory layout, not through the space's own functions), its plan (the untimed filter
// pack, then one persistent kernel) and its source (the template last, every parameter a
// #define).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "codegen/designs.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "plan_test_support.hpp"
#include "spec_builders.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::codegen {
namespace {

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

using spec_builders::preset;

using testing::param;

std::vector<Variant> halo(const spec::Problem& p) {
  std::vector<Variant> out;
  for (auto& v : testing::candidate_variants(p, Candidate::fused_conv, sm90()))
    if (v.design == "fused-conv.halo") out.push_back(std::move(v));
  return out;
}

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

const char* const kShapes[] = {
    "conv2d(n=2,c=5,h=17,w=19,k=76,r=3,s=2,stride=2x1,pad=1,dilation=1x2) | add(param[k]) | relu",
    "conv2d(n=2,c=40,h=30,w=30,k=64,r=3,pad=1) | gelu | clamp(-1,1)",
    "conv2d(n=3,c=70,h=21,w=33,k=40,r=1,s=5,stride=2,pad=2) | sigmoid",
    "conv2d(n=2,c=64,h=36,w=68,k=200,r=3,pad=1,out=nhwc) | add(param[k]) | mish",
    "conv2d(n=3,c=1,h=20,w=20,k=200,r=3) | mul(2) | reduce_min(channel)",
    "conv2d(n=1,c=96,h=20,w=20,k=256,r=3,dilation=2) | reduce_sum(channel) | mul(0.5)",
    "conv2d(n=8,c=256,h=30,w=30,k=512,r=3,pad=1) | relu",
    "conv2d(n=16,c=64,h=7,w=7,k=64,r=3,pad=1) | add(param[k]) | add(param[k]) | reduce_max(channel)",
    "conv2d(n=2,c=48,h=26,w=30,k=96,r=3,pad=1) | mish | mish",
    "conv2d(n=4,c=33,h=38,w=42,k=130,r=3,pad=1,out=nhwc) | gelu | softplus",
    "conv2d(n=2,c=64,h=34,w=36,k=72,r=3) | silu | tanh | reduce_mean(channel) | mul(3)",
};

std::vector<spec::Problem> problems() {
  std::vector<spec::Problem> all = {preset("kernelbench-31"), preset("kernelbench-32")};
  for (const char* s : kShapes) all.push_back(spec::parse(s));
  return all;
}

TEST(FusedConvHalo, TakesNchwInputOnly) {
  EXPECT_FALSE(halo(preset("kernelbench-31")).empty());
  EXPECT_FALSE(halo(preset("kernelbench-32")).empty());
  EXPECT_TRUE(halo(spec::parse("conv2d(n=2,c=64,h=32,w=32,k=64,r=3,in=nhwc) | relu")).empty());
  EXPECT_FALSE(halo(spec::parse("conv2d(n=2,c=64,h=32,w=32,k=64,r=3,out=nhwc) | relu")).empty());
}

TEST(FusedConvHalo, PresetsHaveAFewTensOfVariants) {
  for (const char* name : {"kernelbench-31", "kernelbench-32"}) {
    const auto vs = halo(preset(name));
    EXPECT_GE(vs.size(), 12u) << name;
    EXPECT_LE(vs.size(), 48u) << name;
    // The prototype's best on both presets' shapes (docs/perf-notes.md, v6) is in the space, and
    // the same tile with the epilogue warpgroup (5 stages: its buffers take three stages' room).
    for (const char* best : {"fused-conv.halo.p4.n128.s8.e0", "fused-conv.halo.p4.n128.s5.e1"})
      EXPECT_TRUE(std::any_of(vs.begin(), vs.end(), [&](const Variant& v) { return v.name == best; }))
          << name << ": " << best;
  }
}

TEST(FusedConvHalo, EveryPointKeepsTheConstraints) {
  const gpu::DeviceLimits dev = sm90();
  for (const auto& p : problems()) {
    const spec::Conv& c = p.conv;
    const auto vs = halo(p);
    EXPECT_FALSE(vs.empty()) << spec::canonical(p);
    const int64_t pq = c.p() * c.q();
    const int64_t largest = std::max({c.input_elems(), c.weight_elems(), c.conv_out_elems()});
    const int64_t chan_floats = c.k * ((p.conv.bias ? 1 : 0) + p.num_params);
    for (const auto& v : vs) {
      SCOPED_TRACE(v.name);
      const int64_t tp = param(v, "tp"), tq = param(v, "tq"), bn = param(v, "bn"), stages = param(v, "stages");
      const int64_t epi_wg = param(v, "epi_wg"), cp = testing::halo_cp(v);
      // channels per tap in a K tile: 32, or (below 17 channels) also C rounded up to 4, 8 or 16
      const int64_t min_cp = c.c <= 4 ? 4 : c.c <= 8 ? 8 : c.c <= 16 ? 16 : 32;
      // (past 16 channels a cp parameter is the shared-memory fallback: chunks of 16)
      const bool has_cp = std::any_of(v.params.begin(), v.params.end(), [](const auto& item) { return item.first == "cp"; });
      EXPECT_TRUE(cp == 32 || cp == min_cp || (min_cp == 32 && has_cp && cp == 16)) << cp;
      EXPECT_EQ(has_cp, min_cp < 32 || cp == 16);
      // the GEMM's K: C rounded up to cp, times R*S rounded up to the K tile's 32/cp taps
      const int64_t taps_per_tile = 32 / cp;
      const int64_t gemm_k = (c.c + cp - 1) / cp * ((c.r * c.s + taps_per_tile - 1) / taps_per_tile) * 32;
      EXPECT_EQ(tp * tq, 128);
      EXPECT_TRUE(bn == 32 || bn == 64 || bn == 128 || bn == 256);
      EXPECT_GE(stages, 4);
      EXPECT_TRUE(epi_wg == 0 || epi_wg == 1 || epi_wg == 2);
      // The template's layout: FT_VW, FT_HR, FT_HCP, FT_CHS, FT_SMEM_NEEDED.
      const int64_t vw = c.w % 4 == 0 ? 4 : c.w % 2 == 0 ? 2 : 1;
      const int64_t hr = (tp - 1) * c.stride_h + (c.r - 1) * c.dil_h + 1;
      const int64_t hc = (tq - 1) * c.stride_w + (c.s - 1) * c.dil_w + 1;
      const int64_t hcp = (hc + 2 * (vw - 1)) / vw * vw;
      const int64_t chs = (hr * hcp + 23) / 32 * 32 + 8;
      EXPECT_EQ(chs % 32, 8);
      // FT_EPI_BYTES: e1's raw accumulators; e0's staging tile, pixel-major (64 x (32 + 8)) for
      // NHWC output, channel-major (32 x (64 + 4)) for NCHW; none when reducing.
      const int64_t staging = epi_wg                        ? 2 * bn * 68 * 4
                              : p.reduce                    ? 0
                              : param(v, "out_nhwc") == 1 ? 2 * 64 * 40 * 4
                                                            : 2 * 32 * 68 * 4;
      // FT_EPI_RED_BYTES: two epilogue warpgroups meet with their partial reductions
      const int64_t red = epi_wg == 2 && p.reduce ? 2 * 64 * 4 : 0;
      const int64_t smem = 1024 + stages * bn * 128 + 2 * cp * chs * 4 + staging + round_up(chan_floats * 4, 16) +
                           red + 16 * (stages + 2) + 32 * (epi_wg ? 1 : 0) + 64;
      EXPECT_EQ(param(v, "smem_bytes"), smem);
      EXPECT_LE(smem, dev.smem_per_block_optin);
      // no column tile wider than K's power of two, no more than twice the fewest column tiles
      int64_t widest = 32;
      while (widest < c.k && widest < 256) widest *= 2;
      EXPECT_LE(bn, widest);
      EXPECT_LE((c.k + bn - 1) / bn, 2 * ((c.k + 255) / 256));
      EXPECT_LE(round_up(c.k, bn) * gemm_k, largest);
      // the parameters in the template's order, then the derived ones
      std::vector<std::string> names;
      for (const auto& [n, value] : v.params) names.push_back(n);
      // (cp only below 17 input channels: wider inputs' sources are those of before it)
      std::vector<std::string> expected{"tp", "bn", "stages", "epi_wg", "reduce", "out_nhwc", "split"};
      if (has_cp) expected.push_back("cp");
      for (const char* derived : {"tq", "smem_bytes"}) expected.push_back(derived);
      EXPECT_EQ(names, expected);
      EXPECT_EQ(param(v, "split"), 0);
      EXPECT_EQ(param(v, "reduce"), p.reduce ? 1 : 0);
      EXPECT_EQ(param(v, "out_nhwc"), v.output_layout == spec::Layout::nhwc ? 1 : 0);
      EXPECT_EQ(v.name, "fused-conv.halo.p" + std::to_string(tp) + ".n" + std::to_string(bn) + ".s" +
                            std::to_string(stages) + ".e" + std::to_string(epi_wg) +
                            (has_cp ? ".c" + std::to_string(cp) : ""));
      EXPECT_EQ(v.role(), Role::solution);
      EXPECT_TRUE(v.arch_specific);
      EXPECT_EQ(check_variant(v, p), "");
      // the plan: the pack (untimed, one thread per packed float), then the persistent kernel
      ASSERT_EQ(v.plan.size(), 2u);
      const KernelStep& pk = v.plan[0].kernel();
      const KernelStep& k = v.plan[1].kernel();
      EXPECT_FALSE(v.plan[0].timed);
      EXPECT_TRUE(v.plan[1].timed);
      const int64_t packed = round_up(c.k, bn) * gemm_k;
      EXPECT_EQ(v.buffer(pk.args[1]).floats(), packed);
      EXPECT_EQ(pk.launch.grid[0], uint32_t((packed + 255) / 256));
      const int64_t tiles = c.n * ((c.p() + tp - 1) / tp) * ((c.q() + tq - 1) / tq);
      EXPECT_EQ(k.launch.grid, (std::array<uint32_t, 3>{uint32_t(std::min<int64_t>(tiles, 132)), 1, 1}));
      EXPECT_EQ(k.launch.block, (std::array<uint32_t, 3>{uint32_t(384 + 128 * epi_wg), 1, 1}));
      EXPECT_EQ(int64_t(k.launch.smem_bytes), smem);
      EXPECT_DOUBLE_EQ(v.kernel_bytes, 4.0 * double(c.input_elems() + (p.reduce ? c.n * pq : c.conv_out_elems())));
    }
  }
}

TEST(FusedConvHalo, RejectionsSayWhy) {
  const spec::Problem p = preset("kernelbench-31");
  const KernelDesign d = fused_conv_halo_design(shape_of(p), sm90(), p);
  std::vector<Rejection> rejected;
  const auto points = d.space.enumerate(&rejected);
  EXPECT_EQ(points.size() + rejected.size(), d.space.size());
  const auto reason_of = [&](int64_t tp, int64_t bn, int64_t stages, int64_t epi_wg = 0) {
    for (const auto& r : rejected)
      if (r.values.at("tp") == tp && r.values.at("bn") == bn && r.values.at("stages") == stages &&
          r.values.at("epi_wg") == epi_wg)
        return r.reason;
    return std::string("accepted");
  };
  EXPECT_NE(reason_of(4, 256, 4).find("bn must not exceed"), std::string::npos);         // K = 128
  EXPECT_NE(reason_of(4, 32, 4).find("at most twice the fewest"), std::string::npos);    // 4 column tiles
  EXPECT_NE(reason_of(1, 128, 4).find("halo window"), std::string::npos);                // 1 x 128: 3.2 per pixel
  EXPECT_EQ(reason_of(4, 128, 8), "accepted");
  // the epilogue warpgroup's two 128 x 64 buffers (68 KB) leave no room for 8 filter stages
  EXPECT_NE(reason_of(4, 128, 8, 1).find("shared memory"), std::string::npos);
  // bn = 256 and 8 stages of filter tiles do not fit next to the halo buffers.
  const spec::Problem wide = spec::parse("conv2d(n=8,c=256,h=30,w=30,k=512,r=3,pad=1) | relu");
  const KernelDesign dw = fused_conv_halo_design(shape_of(wide), sm90(), wide);
  rejected.clear();
  (void)dw.space.enumerate(&rejected);
  bool seen = false;
  for (const auto& r : rejected)
    if (r.values.at("tp") == 4 && r.values.at("bn") == 256 && r.values.at("stages") == 8 && r.values.at("epi_wg") == 0) {
      seen = true;
      EXPECT_NE(r.reason.find("shared memory"), std::string::npos) << r.reason;
    }
  EXPECT_TRUE(seen);
}

TEST(FusedConvHalo, TwoEpilogueWarpgroupsOnlyForChainsOfCostlyOps) {
  // A chain of two ops rendered with special functions gets e2 variants (one epilogue warpgroup
  // per consumer); a cheap chain, or one costly op, does not: its variants are e0 and e1 only.
  const auto has_e2 = [](const char* text) {
    const auto vs = halo(spec::parse(text));
    EXPECT_FALSE(vs.empty()) << text;
    return std::any_of(vs.begin(), vs.end(), [](const Variant& v) { return param(v, "epi_wg") == 2; });
  };
  EXPECT_TRUE(has_e2("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | mish | mish"));
  EXPECT_TRUE(has_e2("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | gelu | add(1) | softplus"));
  EXPECT_TRUE(has_e2("conv2d(n=2,c=64,h=34,w=36,k=72,r=3) | silu | tanh | reduce_mean(channel) | mul(3)"));
  EXPECT_FALSE(has_e2("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | mish"));
  EXPECT_FALSE(has_e2("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | relu | mul(2)"));
  EXPECT_FALSE(halo(preset("kernelbench-31")).empty());
  for (const auto& v : halo(preset("kernelbench-31"))) EXPECT_NE(param(v, "epi_wg"), 2) << v.name;
  // where it is ruled out, the reason says so
  const spec::Problem p = preset("kernelbench-31");
  std::vector<Rejection> rejected;
  (void)fused_conv_halo_design(shape_of(p), sm90(), p).space.enumerate(&rejected);
  bool seen = false;
  for (const auto& r : rejected)
    if (r.values.at("epi_wg") == 2 && r.reason.find("two epilogue warpgroups") != std::string::npos) seen = true;
  EXPECT_TRUE(seen);
}

TEST(FusedConvHalo, NarrowImagesGetNarrowTiles) {
  // Q = 7: only 16-column tiles (8 x 16) do not compute mostly padding.
  const auto vs = halo(spec::parse("conv2d(n=16,c=64,h=7,w=7,k=64,r=3,pad=1) | relu"));
  ASSERT_FALSE(vs.empty());
  for (const auto& v : vs) EXPECT_EQ(param(v, "tq"), 16) << v.name;
}

TEST(FusedConvHalo, SourceCarriesEveryParameterAndTheTemplateLast) {
  const Variant v = halo(preset("kernelbench-32")).at(0);
  for (const char* line : {"#define FT_TP ", "#define FT_TQ ", "#define FT_BN ", "#define FT_STAGES ", "#define FT_REDUCE 1",
                           "#define FT_OUT_NHWC 0", "#define FT_SMEM_BYTES ", "#define FT_STRIDE_H 1", "#define FT_DIL_W 1"})
    EXPECT_NE(v.source.find(line), std::string::npos) << line;
  EXPECT_NE(v.source.find("// kernels:    ft_fused_conv_pack ft_fused_conv"), std::string::npos);
  EXPECT_LT(v.source.find("// ---- epilogue ops"), v.source.find("// ---- fused_conv_halo.cu"));
  EXPECT_EQ(v.source.find("// ---- fused_conv.cu"), std::string::npos);
}

TEST(FusedConvHalo, BothDesignsBelow32Channels) {
  std::set<std::string> designs;
  for (const auto& v : testing::candidate_variants(spec::parse("conv2d(n=4,c=8,h=64,w=64,k=64,r=3) | relu"),
                                                   Candidate::fused_conv, sm90()))
    designs.insert(v.design);
  EXPECT_EQ(designs, (std::set<std::string>{"fused-conv", "fused-conv.halo"}));
  designs.clear();
  for (const auto& v : testing::candidate_variants(preset("kernelbench-31"), Candidate::fused_conv, sm90()))
    designs.insert(v.design);
  EXPECT_EQ(designs, (std::set<std::string>{"fused-conv.halo"}));
}

// Below 17 input channels a K tile of 32 holds 32/cp taps of cp channels: KernelBench's C = 8
// convs (#57, #69, #71, #87...) run a K of 96 for their 72 instead of 288, a third of the MMAs;
// the one-tap tiles (c32) stay offered beside them. Past 16 channels nothing changes, names too.
TEST(FusedConvHalo, SmallInputsPackSeveralTapsIntoAKTile) {
  for (const bool strict : {false, true}) {
    GenerateOptions o;
    o.strict_fp32 = strict;
    const spec::Problem p = spec::parse("conv2d(n=128,c=8,h=128,w=128,k=64,r=3,bias=true) | relu | hardswish");
    std::set<int64_t> cps;
    for (const auto& v : generate_variants(p, sm90(), o)) {
      if (!v.design.starts_with("fused-conv.halo")) continue;
      const int64_t cp = param(v, "cp");
      cps.insert(cp);
      EXPECT_TRUE(v.name.ends_with(".c" + std::to_string(cp))) << v.name;
      EXPECT_NE(v.source.find("#define FT_CP " + std::to_string(cp) + "\n"), std::string::npos) << v.name;
      // the packed filters: K rounded up to bn, by 96 (cp 8: 3 K tiles of 4 taps) or 288
      const int64_t bn = param(v, "bn");
      EXPECT_EQ(v.buffer(v.plan[0].kernel().args[1]).floats(),
                round_up(64, bn) * (cp == 8 ? 96 : 288) * (strict ? 2 : 1))
          << v.name;
    }
    EXPECT_EQ(cps, (std::set<int64_t>{8, 32})) << strict;
  }
  {
    std::set<int64_t> cps;
    for (const auto& v : halo(spec::parse("conv2d(n=2,c=16,h=32,w=32,k=64,r=5,pad=2) | relu"))) cps.insert(param(v, "cp"));
    EXPECT_EQ(cps, (std::set<int64_t>{16, 32}));
  }
  // A ResNet stem (C = 3, 7 x 7, stride 2): one-tap tiles need a halo of 32 channel planes of 13 x
  // 72 floats or more, two buffers past the shared memory; 4 planes fit, so the halo design now
  // has variants there, all with 8 taps per K tile.
  {
    std::set<int64_t> cps;
    for (const auto& v : halo(spec::parse("conv2d(n=2,c=3,h=64,w=64,k=64,r=7,stride=2,pad=3) | relu")))
      cps.insert(param(v, "cp"));
    EXPECT_EQ(cps, (std::set<int64_t>{4}));
  }
  for (const auto& v : halo(spec::parse("conv2d(n=2,c=17,h=32,w=32,k=64,r=3) | relu"))) {
    EXPECT_EQ(v.name.find(".c"), std::string::npos) << v.name;
    // no FT_CP among the parameters: the template's own default (32) stands
    EXPECT_GT(v.source.find("#define FT_CP "), v.source.find("// ---- fused_conv_halo.cu")) << v.name;
  }
}

// ResNet-50's stride-2 3 x 3 convs of 256 and 512 channels (and ConvNeXt's 2 x 2 downsampler of
// 192): no tile's halo of 32 channel planes fits beside its filter stages, so the halo design
// takes chunks of 16 channels (c16, two taps per K tile) there, and only there; the gather design
// stays offered beside it.
TEST(FusedConvHalo, WideStrideTwoConvsTakeChunksOf16WhereTheHaloOutgrowsSharedMemory) {
  for (const char* s : {"conv2d(n=32,c=256,h=28,w=28,k=256,r=3,stride=2,pad=1) | relu",
                        "conv2d(n=32,c=512,h=14,w=14,k=512,r=3,stride=2,pad=1) | relu",
                        "conv2d(n=32,c=192,h=28,w=28,k=384,r=2,stride=2) | gelu"}) {
    SCOPED_TRACE(s);
    const auto vs = halo(spec::parse(s));
    ASSERT_FALSE(vs.empty());
    for (const auto& v : vs) {
      EXPECT_EQ(param(v, "cp"), 16) << v.name;
      EXPECT_TRUE(v.name.ends_with(".c16")) << v.name;
      // K: ceil(C / 16) chunks x ceil(R*S / 2) K tiles of 32
      const spec::Conv& c = spec::parse(s).conv;
      EXPECT_EQ(v.buffer(v.plan[0].kernel().args[1]).floats(),
                round_up(c.k, param(v, "bn")) * (c.c / 16) * ((c.r * c.s + 1) / 2) * 32);
    }
    std::set<std::string> designs;
    for (const auto& v : testing::candidate_variants(spec::parse(s), Candidate::fused_conv, sm90()))
      designs.insert(v.design);
    EXPECT_EQ(designs, (std::set<std::string>{"fused-conv", "fused-conv.halo"}));
  }
  // the same conv at stride 1 has one-tap K tiles of 32 channels, no cp
  for (const auto& v : halo(spec::parse("conv2d(n=32,c=256,h=28,w=28,k=256,r=3,pad=1) | relu")))
    EXPECT_EQ(v.name.find(".c"), std::string::npos) << v.name;
}

// --math fp32: the 3xTF32 design only (TF32 products fail the fp32 rule): a stage holds the big
// and the small filter tile, the pack writes both, bn at most 128.
TEST(FusedConvHalo, StrictFp32GetsThe3xTf32DesignOnly) {
  GenerateOptions strict;
  strict.strict_fp32 = true;
  for (const auto& p : problems()) {
    const spec::Conv& c = p.conv;
    size_t n = 0;
    for (const auto& v : generate_variants(p, sm90(), strict)) {
      if (v.candidate != Candidate::fused_conv) continue;
      SCOPED_TRACE(v.name);
      ++n;
      EXPECT_EQ(v.design, "fused-conv.halo3x");
      EXPECT_EQ(param(v, "split"), 1);
      const int64_t tp = param(v, "tp"), tq = param(v, "tq"), bn = param(v, "bn"), stages = param(v, "stages");
      const int64_t epi_wg = param(v, "epi_wg"), cp = testing::halo_cp(v);
      EXPECT_LE(bn, 128);
      const int64_t vw = c.w % 4 == 0 ? 4 : c.w % 2 == 0 ? 2 : 1;
      const int64_t hr = (tp - 1) * c.stride_h + (c.r - 1) * c.dil_h + 1;
      const int64_t hc = (tq - 1) * c.stride_w + (c.s - 1) * c.dil_w + 1;
      const int64_t chs = (hr * ((hc + 2 * (vw - 1)) / vw * vw) + 23) / 32 * 32 + 8;
      const int64_t chan_floats = c.k * ((c.bias ? 1 : 0) + p.num_params);
      // FT_EPI_BYTES: e1's raw accumulators; e0's staging tile, pixel-major (64 x (32 + 8)) for
      // NHWC output, channel-major (32 x (64 + 4)) for NCHW; none when reducing.
      const int64_t staging = epi_wg                        ? 2 * bn * 68 * 4
                              : p.reduce                    ? 0
                              : param(v, "out_nhwc") == 1 ? 2 * 64 * 40 * 4
                                                            : 2 * 32 * 68 * 4;
      const int64_t red = epi_wg == 2 && p.reduce ? 2 * 64 * 4 : 0;
      EXPECT_EQ(param(v, "smem_bytes"), 1024 + stages * bn * 128 * 2 + 2 * cp * chs * 4 + staging +
                                            round_up(chan_floats * 4, 16) + red + 16 * (stages + 2) +
                                            32 * (epi_wg ? 1 : 0) + 64);
      const KernelStep& pk = v.plan[0].kernel();
      const int64_t taps_per_tile = 32 / cp;
      EXPECT_EQ(v.buffer(pk.args[1]).floats(),
                2 * round_up(c.k, bn) * ((c.c + cp - 1) / cp) * ((c.r * c.s + taps_per_tile - 1) / taps_per_tile) * 32);
      EXPECT_NE(v.source.find("#define FT_SPLIT 1"), std::string::npos);
      EXPECT_EQ(check_variant(v, p), "");
    }
    // Every problem but those whose doubled filters outgrow their largest tensor (the bound on
    // scratch buffers: the K = 256 dilated conv of one image, the 7 x 7 images).
    const int64_t largest = std::max({c.input_elems(), c.weight_elems(), c.conv_out_elems()});
    if (2 * round_up(c.k, 64) * round_up(c.c, 32) * c.r * c.s <= largest) {
      EXPECT_GT(n, 0u) << spec::canonical(p);
    }
  }
  // TF32 runs get none of them.
  for (const auto& v : halo(preset("kernelbench-31"))) EXPECT_EQ(v.design, "fused-conv.halo");
}

TEST(FusedConvHalo, TheGatherDesignStandsInWhereTheHaloHasNoPoint) {
  // C = 40 padded to 64 per tap makes the halo's packed filters larger than every tensor of this
  // small problem (found by review): the gather design, which pads C*R*S as a whole, is offered.
  const spec::Problem p = spec::parse("conv2d(n=2,c=40,h=17,w=19,k=76,r=3) | relu");
  EXPECT_TRUE(halo(p).empty());
  std::set<std::string> designs;
  for (const auto& v : testing::candidate_variants(p, Candidate::fused_conv, sm90())) designs.insert(v.design);
  EXPECT_EQ(designs, (std::set<std::string>{"fused-conv"}));
}

}  // namespace
}  // namespace fusetune::codegen
