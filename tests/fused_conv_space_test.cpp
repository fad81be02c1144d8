// The fused-conv candidate (GPU-free): its search space on the presets and awkward shapes, the
// constraints every point keeps (checked here from the formulas, not through the space), its
// plan (the untimed filter pack, then the one kernel), and the arch-specific flag: compiled for
// sm_90a, written to the variant JSON only when set, and only on sm_90 devices.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "codegen/compile_target.hpp"
#include "codegen/designs.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "codegen_problems.hpp"
#include "plan_test_support.hpp"
#include "spec_builders.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::codegen {
namespace {

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

using spec_builders::preset;

// Shapes that stress the implicit GEMM's edges: one or three input channels (one k-tile), K
// below and past the tile widths, stride/pad/dilation, R != S, one image, NHWC in and out.
const char* const kAwkward[] = {
    "conv2d(n=2,c=1,h=40,w=36,k=16,r=3) | relu",
    "conv2d(n=2,c=3,h=64,w=64,k=200,r=3) | add(param[k]) | gelu",
    "conv2d(n=1,c=16,h=33,w=31,k=24,r=3,stride=2,pad=1,dilation=2) | mul(param[k]) | reduce_max(channel) | sigmoid",
    "conv2d(n=2,c=8,h=20,w=24,k=32,r=3,s=5,bias=false) | tanh",
    "conv2d(n=1,c=64,h=56,w=56,k=64,r=1) | min(0.5) | reduce_mean(channel)",
    "conv2d(n=2,c=8,h=16,w=16,k=64,r=3,in=nhwc) | reduce_min(channel) | abs",
    "conv2d(n=2,c=8,h=16,w=16,k=64,r=3,out=nhwc) | add(param[k]) | hardswish",
    "conv2d(n=2,c=8,h=16,w=16,k=48,r=3,in=nhwc,out=nhwc) | relu",
    "conv2d(n=2,c=8,h=16,w=16,k=48,r=3,out=any) | silu",
};

std::vector<spec::Problem> problems() {
  std::vector<spec::Problem> all = {preset("kernelbench-31"), preset("kernelbench-32")};
  for (const char* s : kAwkward) all.push_back(spec::parse(s));
  return all;
}

using testing::param;

std::vector<Variant> fused(const spec::Problem& p, const gpu::DeviceLimits& dev = sm90()) {
  return testing::candidate_variants(p, Candidate::fused_conv, dev);
}

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

TEST(FusedConvSpace, PresetsHaveTensOfVariants) {
  for (const char* name : {"kernelbench-31", "kernelbench-32"}) {
    const auto vs = fused(preset(name));
    std::printf("[ fused-conv ] %s: %zu variants\n", name, vs.size());
    EXPECT_GE(vs.size(), 10u) << name;
    EXPECT_LE(vs.size(), 60u) << name;
  }
}

TEST(FusedConvSpace, EveryPointKeepsTheConstraints) {
  const gpu::DeviceLimits dev = sm90();
  for (const auto& p : problems()) {
    const spec::Conv& c = p.conv;
    const auto vs = fused(p);
    EXPECT_FALSE(vs.empty()) << spec::canonical(p);
    const int64_t kg_pad = round_up(c.c * c.r * c.s, 32);
    const int64_t pixels = c.n * c.p() * c.q();
    const int64_t largest = std::max({c.input_elems(), c.weight_elems(), c.conv_out_elems()});
    for (const auto& v : vs) {
      if (v.design != "fused-conv") continue;  // the halo design: fused_conv_halo_space_test.cpp
      const int64_t bm = param(v, "bm"), bn = param(v, "bn"), stages = param(v, "stages");
      const int64_t gather = param(v, "gather");
      const int64_t producers = gather == 1 ? 2 : 1;  // the register-path producer has two warpgroups
      const int64_t threads = 128 * (bm / 64 + producers);
      const int64_t smem = 1024 + stages * (bm + bn) * 32 * 4 + (bm / 64) * 32 * (64 + 4) * 4 + 16 * stages + 64;
      EXPECT_LE(bn, std::max<int64_t>(32, round_up(c.k, 32))) << v.name;
      EXPECT_LE(bn / 2 + 64, std::min<int64_t>(255, 65536 / threads)) << v.name;
      EXPECT_LE(smem, dev.smem_per_block_optin) << v.name;
      EXPECT_TRUE(bm != 64 || pixels < 132 * 128 * 4) << v.name;
      EXPECT_GE(stages, 3) << v.name;
      EXPECT_LE(round_up(c.k, bn) * kg_pad, largest) << v.name;
      // The fixed parameters and the derived one, in the template's order.
      std::vector<std::string> names;
      for (const auto& [n, value] : v.params) names.push_back(n);
      EXPECT_EQ(names, (std::vector<std::string>{"bm", "bn", "stages", "gather", "bk", "reduce", "out_nhwc",
                                                 "in_nhwc", "smem_bytes", "producers"}))
          << v.name;
      EXPECT_EQ(param(v, "bk"), 32);
      EXPECT_EQ(param(v, "reduce"), p.reduce ? 1 : 0);
      EXPECT_EQ(param(v, "in_nhwc"), c.in == spec::Layout::nhwc ? 1 : 0);
      EXPECT_EQ(param(v, "out_nhwc"), v.output_layout == spec::Layout::nhwc ? 1 : 0);
      EXPECT_EQ(param(v, "smem_bytes"), smem) << v.name;
      EXPECT_EQ(param(v, "producers"), producers) << v.name;
      EXPECT_EQ(v.name, "fused-conv.m" + std::to_string(bm) + ".n" + std::to_string(bn) + ".s" + std::to_string(stages) +
                            ".g" + std::to_string(gather));
      EXPECT_EQ(v.design, "fused-conv");
      EXPECT_EQ(v.role(), Role::solution);
      EXPECT_TRUE(v.arch_specific);
      EXPECT_EQ(check_variant(v, p), "") << v.name;
      // The launch the template expects.
      const KernelStep& k = v.plan.back().kernel();
      EXPECT_EQ(k.launch.grid, (std::array<uint32_t, 3>{uint32_t((pixels + bm - 1) / bm), 1, 1})) << v.name;
      EXPECT_EQ(k.launch.block, (std::array<uint32_t, 3>{uint32_t(threads), 1, 1})) << v.name;
      EXPECT_EQ(int64_t(k.launch.smem_bytes), smem) << v.name;
      // Expected output bytes: x once, out once.
      EXPECT_DOUBLE_EQ(v.kernel_bytes, 4.0 * double(c.input_elems() + p.out_elems())) << v.name;
    }
  }
}

TEST(FusedConvSpace, OutputLayoutFollowsTheSpec) {
  const auto layout_of = [](const char* s) { return fused(spec::parse(s)).at(0).output_layout; };
  EXPECT_EQ(layout_of("conv2d(n=2,c=8,h=16,w=16,k=64,r=3) | relu"), spec::Layout::nchw);
  EXPECT_EQ(layout_of("conv2d(n=2,c=8,h=16,w=16,k=64,r=3,out=nhwc) | relu"), spec::Layout::nhwc);
  EXPECT_EQ(layout_of("conv2d(n=2,c=8,h=16,w=16,k=64,r=3,out=any) | relu"), spec::Layout::nhwc);
  // A reduced output (N, 1, P, Q) is named as asked; any stays NCHW as the epilogue designs name it.
  EXPECT_EQ(layout_of("conv2d(n=2,c=8,h=16,w=16,k=64,r=3,out=any) | reduce_min(channel)"), spec::Layout::nchw);
  EXPECT_EQ(layout_of("conv2d(n=2,c=8,h=16,w=16,k=64,r=3,out=nhwc) | reduce_min(channel)"), spec::Layout::nhwc);
}

TEST(FusedConvSpace, RejectionsSayWhy) {
  const spec::Problem p = preset("kernelbench-31");
  const KernelDesign d = fused_conv_design(shape_of(p), sm90(), p);
  std::vector<Rejection> rejected;
  const auto points = d.space.enumerate(&rejected);
  EXPECT_EQ(points.size() + rejected.size(), d.space.size());
  const auto reason_of = [&](int64_t bm, int64_t bn, int64_t stages, int64_t gather) {
    for (const auto& r : rejected)
      if (r.values.at("bm") == bm && r.values.at("bn") == bn && r.values.at("stages") == stages &&
          r.values.at("gather") == gather)
        return r.reason;
    return std::string("accepted");
  };
  EXPECT_NE(reason_of(128, 256, 3, 0).find("bn must not exceed"), std::string::npos);  // K = 128
  EXPECT_NE(reason_of(64, 64, 3, 0).find("bm = 64 only when"), std::string::npos);     // 2M pixels
  EXPECT_EQ(reason_of(128, 128, 6, 1), "accepted");
  EXPECT_EQ(reason_of(128, 128, 6, 0), "accepted");
}

TEST(FusedConvSpace, RegistersBoundTheWidestTile) {
  // K = 256: bn = 256 needs 128 accumulators per consumer thread, more than a 384-thread block
  // leaves room for next to the producer's state.
  const spec::Problem p = spec::parse("conv2d(n=64,c=64,h=64,w=64,k=256,r=3) | relu");
  const KernelDesign d = fused_conv_design(shape_of(p), sm90(), p);
  std::vector<Rejection> rejected;
  (void)d.space.enumerate(&rejected);
  bool seen = false;
  for (const auto& r : rejected)
    if (r.values.at("bn") == 256 && r.values.at("bm") == 128) {
      seen = true;
      EXPECT_NE(r.reason.find("registers"), std::string::npos) << r.reason;
    }
  EXPECT_TRUE(seen);
}

TEST(FusedConvSpace, SmallProblemsTryBm64) {
  // C = 1, 3x3 over 2*38*34 pixels: fewer than 4 waves of 128-pixel tiles, so bm = 64 is tried.
  const auto vs = fused(spec::parse(kAwkward[0]));
  EXPECT_TRUE(std::any_of(vs.begin(), vs.end(),
                          [](const Variant& v) { return v.design == "fused-conv" && param(v, "bm") == 64; }));
}

TEST(FusedConvSpace, TinyConvolutionsGetNoneThePackedFiltersWouldOutgrowEveryTensor) {
  // N=1, C=1, K=3, 7x7: the padded filters (32 x 32 floats) exceed every tensor of the problem,
  // which check_variant's bound on scratch buffers refuses.
  for (const auto& p : testing::awkward_problems()) EXPECT_TRUE(fused(p).empty());
}

TEST(FusedConvPlan, PacksTheFiltersUntimedThenRunsOneKernel) {
  for (const auto& p : problems()) {
    for (const auto& v : fused(p)) {
      ASSERT_EQ(v.plan.size(), 2u) << v.name;
      const Step& pack = v.plan[0];
      const Step& conv = v.plan[1];
      ASSERT_EQ(pack.kind(), StepKind::kernel);
      ASSERT_EQ(conv.kind(), StepKind::kernel);
      EXPECT_FALSE(pack.timed);
      EXPECT_TRUE(conv.timed);

      const KernelStep& pk = pack.kernel();
      EXPECT_EQ(pk.name, "ft_fused_conv_pack");
      ASSERT_EQ(pk.args.size(), 2u);
      EXPECT_EQ(v.buffer(pk.args[0]).kind, BufferKind::filters);
      const Buffer& wpack = v.buffer(pk.args[1]);
      EXPECT_EQ(wpack.name, "wpack");
      EXPECT_EQ(wpack.kind, BufferKind::scratch);
      // fused_conv.cu packs K = C*R*S rounded up to 32; the halo design (C rounded up to cp) x
      // (R*S rounded up to the K tile's 32/cp taps)
      const int64_t cp = testing::halo_cp(v), taps = 32 / cp;
      const int64_t kg_pad = v.design == "fused-conv.halo"
                                 ? round_up(p.conv.c, cp) / cp * round_up(p.conv.r * p.conv.s, taps) / taps * 32
                                 : round_up(p.conv.c * p.conv.r * p.conv.s, 32);
      const int64_t floats = round_up(p.conv.k, param(v, "bn")) * kg_pad;
      EXPECT_EQ(wpack.floats(), floats) << v.name;
      EXPECT_EQ(pk.writes, (std::vector<size_t>{1}));
      EXPECT_EQ(pk.launch.grid[0], uint32_t((floats + 255) / 256));
      EXPECT_EQ(pk.launch.block, (std::array<uint32_t, 3>{256, 1, 1}));
      EXPECT_EQ(pk.launch.smem_bytes, 0u);

      const KernelStep& ck = conv.kernel();
      EXPECT_EQ(ck.name, "ft_fused_conv");
      ASSERT_EQ(ck.args.size(), 4u);
      EXPECT_EQ(v.buffer(ck.args[0]).kind, BufferKind::input);
      EXPECT_EQ(ck.args[1], pk.args[1]);
      EXPECT_EQ(ck.buffer_arg(2), v.output);
      EXPECT_EQ(v.buffer(ck.args[3]).kind, BufferKind::channels);
      EXPECT_EQ(ck.writes, (std::vector<size_t>{2}));
      EXPECT_EQ(v.output_buffer().name, "out");
      EXPECT_FALSE(v.in_place_output_step().has_value());
    }
  }
}

TEST(FusedConvSource, CarriesTheGeometryAndSharedMemoryDefines) {
  const spec::Problem p = spec::parse(kAwkward[2]);  // stride 2, pad 1, dilation 2
  const Variant v = fused(p).at(0);
  for (const char* line : {"#define FT_STRIDE_H 2", "#define FT_STRIDE_W 2", "#define FT_PAD_H 1", "#define FT_PAD_W 1",
                           "#define FT_DIL_H 2", "#define FT_DIL_W 2", "#define FT_REDUCE 1", "#define FT_BK 32"})
    EXPECT_NE(v.source.find(line), std::string::npos) << line;
  EXPECT_NE(v.source.find("#define FT_SMEM_BYTES " + std::to_string(fused_conv_smem_bytes([&] {
                                                        ParamValues pv;
                                                        pv.items = v.params;
                                                        return pv;
                                                      }()))),
            std::string::npos);
  // Kernels named in the header, the template last.
  EXPECT_NE(v.source.find("// kernels:    ft_fused_conv_pack ft_fused_conv"), std::string::npos);
  EXPECT_LT(v.source.find("// ---- conv geometry"), v.source.find("// ---- ft_common.cuh"));
  EXPECT_LT(v.source.find("// ---- epilogue ops"), v.source.find("// ---- fused_conv.cu"));
  // Other designs' sources keep their shape block as it was: no geometry in it.
  EXPECT_EQ(shape_defines(shape_of(p)).find("FT_STRIDE"), std::string::npos);
  for (const auto& other : generate_variants(p, sm90())) {
    if (other.candidate != Candidate::fused_conv) {
      EXPECT_EQ(other.source.find("FT_STRIDE_H"), std::string::npos) << other.name;
    }
  }
}

TEST(FusedConvDevice, OnlySm90GetsIt) {
  const spec::Problem p = preset("kernelbench-31");
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_100"})
    EXPECT_TRUE(fused(p, *gpu::limits_for_arch(arch)).empty()) << arch;
  EXPECT_FALSE(fused(p, *gpu::limits_for_arch("sm_90a")).empty());
  gpu::DeviceLimits sm91 = sm90();
  sm91.cc_minor = 1;
  EXPECT_TRUE(fused(p, sm91).empty());
}

TEST(FusedConvRecord, ArchSpecificRoundTripsAndOnlyFusedConvWritesIt) {
  for (const auto& p : problems()) {
    for (const auto& v : generate_variants(p, sm90())) {
      const nlohmann::json j = to_json(v);
      const Variant back = variant_from_json(j);
      EXPECT_EQ(to_json(back), j) << v.name;
      EXPECT_EQ(back.arch_specific, v.arch_specific) << v.name;
      EXPECT_EQ(v.arch_specific, v.candidate == Candidate::fused_conv) << v.name;
      if (v.arch_specific) {
        EXPECT_EQ(j.at("arch_specific"), true) << v.name;
      } else {
        EXPECT_FALSE(j.contains("arch_specific")) << v.name;  // stored records stay byte for byte
      }
    }
  }
  // Absent reads as false; an explicit false reads too (and is not written back).
  const Variant e = generate_variants(preset("kernelbench-31"), sm90()).back();
  nlohmann::json j = to_json(e);
  j["arch_specific"] = false;
  EXPECT_FALSE(variant_from_json(j).arch_specific);
  nlohmann::json bad = to_json(e);
  bad["arch_specific"] = "yes";
  EXPECT_ANY_THROW((void)variant_from_json(bad));
}

TEST(FusedConvRecord, CompileTargetIsArchSpecificForFusedConvOnly) {
  const auto all = generate_variants(preset("kernelbench-32"), sm90());
  size_t fused_n = 0;
  for (const auto& v : all) {
    const gpu::CompileOptions o = compile_options(v, "sm_90", true);
    EXPECT_TRUE(o.strict_fp32);
    if (v.candidate == Candidate::fused_conv) {
      ++fused_n;
      EXPECT_EQ(o.arch, "sm_90a") << v.name;
      EXPECT_EQ(compile_arch(v, "sm_90a"), "sm_90a");  // --arch sm_90a is not doubled
      EXPECT_EQ(gpu::nvrtc_options(o).front(), "--gpu-architecture=sm_90a");
      EXPECT_EQ(nvcc_arch_flag(v, "sm_90"), "-gencode arch=compute_90a,code=sm_90a");
    } else {
      EXPECT_EQ(o.arch, "sm_90") << v.name;
      EXPECT_EQ(nvcc_arch_flag(v, "sm_90"), "-arch=sm_90");
    }
  }
  EXPECT_GT(fused_n, 0u);
  EXPECT_EQ(candidate_name(Candidate::fused_conv), "fused-conv");
  EXPECT_EQ(candidate_from_name("fused-conv"), Candidate::fused_conv);
  EXPECT_EQ(role_of(Candidate::fused_conv), Role::solution);
}

}  // namespace
}  // namespace fusetune::codegen
