// Every fused-conv variant compiles with NVRTC for sm_90a (GPU-free), through the same
// options helper the tuner uses (codegen/compile_target.hpp), in at most 5 s each, without
// register spills, and with its ptxas figures inside what the search space assumed: the
// registers its constraint allowed and no static shared memory next to the dynamic carve-up.
// A stored fused-conv winner, compiled for sm_90a, is traced by the provenance check and
// exported as a CUBIN rebuilt for sm_90a.
#include <gtest/gtest.h>

// GCC 12 at -O3 reports a false -Wrestrict inside std::string's assign of a short literal
// (GCC bug 105329), as in trust_records_test.cpp.
#pragma GCC diagnostic ignored "-Wrestrict"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <vector>

#include "codegen/compile_target.hpp"
#include "templates/embedded_templates.hpp"
#include "codegen/generate.hpp"
#include "export/export.hpp"
#include "export_test_winners.hpp"
#include "plan_test_support.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"
#include "compile_every.hpp"

namespace fusetune::codegen {
namespace {

constexpr double kMaxCompileMs = 5000.0;

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

using testing::compile_every;
using testing::param;

// The fused-conv variants `tune` generates for the math mode: TF32 designs, or under strict fp32
// the 3xTF32 one.
std::vector<Variant> fused(const std::string& spec_text, bool strict_fp32 = false) {
  GenerateOptions o;
  o.strict_fp32 = strict_fp32;
  std::vector<Variant> out;
  for (auto& v : generate_variants(spec::parse(spec_text), sm90(), o))
    if (v.candidate == Candidate::fused_conv) out.push_back(std::move(v));
  return out;
}

void expect_all_compile(const std::vector<Variant>& variants, const std::string& what, bool strict_fp32 = false) {
  ASSERT_FALSE(variants.empty()) << what;
  const auto results = compile_every(variants, strict_fp32);
  double slowest = 0;
  int max_regs = 0;
  for (const auto& c : results) {
    const Variant& v = *c.variant;
    const auto& r = c.result;
    // The bound is per variant on one core (NVRTC compiles on the calling thread); wall time
    // under ctest -j on two cores measured up to twice that.
    testing::expect_compiled_cleanly(c, kMaxCompileMs);
    // The space's register constraint: min(255, 65536 / threads) per thread (the halo design
    // launches 384 threads, plus 128 per epilogue warpgroup, and moves registers between its
    // warpgroups with setmaxnreg).
    const int64_t threads = v.design.starts_with("fused-conv.halo")
                                ? 384 + 128 * param(v, "epi_wg")
                                : 128 * (param(v, "bm") / 64 + param(v, "producers"));
    EXPECT_LE(r.registers, std::min<int64_t>(255, 65536 / threads)) << v.name;
    EXPECT_EQ(r.smem_bytes, 0) << v.name << ": static shared memory besides FT_SMEM_BYTES";
    for (const char* k : {"ft_fused_conv_pack", "ft_fused_conv"})
      EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), k), r.kernel_names.end()) << v.name << " " << k;
    slowest = std::max(slowest, c.cpu_ms);
    max_regs = std::max(max_regs, r.registers);
  }
  std::printf("[ fused-conv ] %s: %zu variants compiled for sm_90a, slowest %.1f s of CPU, max %d registers\n", what.c_str(),
              results.size(), slowest / 1000.0, max_regs);
}

TEST(FusedConvCompile, EveryPreset31VariantCompilesForSm90a) {
  expect_all_compile(fused(*spec::preset_spec("kernelbench-31")), "kernelbench-31");
}

TEST(FusedConvCompile, EveryPreset32VariantCompilesForSm90a) {
  expect_all_compile(fused(*spec::preset_spec("kernelbench-32")), "kernelbench-32");
}

TEST(FusedConvCompile, BothDesignsAreCompiled) {
  // The presets (NCHW input, C = 64) get the halo design only; C < 32 gets both.
  for (const char* name : {"kernelbench-31", "kernelbench-32"})
    for (const auto& v : fused(*spec::preset_spec(name))) EXPECT_EQ(v.design, "fused-conv.halo") << v.name;
  std::set<std::string> designs;
  for (const auto& v : fused("conv2d(n=2,c=8,h=64,w=64,k=64,r=3) | relu")) designs.insert(v.design);
  EXPECT_EQ(designs, (std::set<std::string>{"fused-conv", "fused-conv.halo"}));
}

TEST(FusedConvCompile, AwkwardShapesCompileInBothMathModes) {
  // TF32 variants with tune's tf32 options; under --math fp32 the 3xTF32 variants tune then
  // generates, with its fp32 options (--fmad=false).
  for (const bool strict : {false, true}) {
    std::vector<Variant> all;
    for (const char* s : {"conv2d(n=2,c=1,h=40,w=36,k=16,r=3) | relu",
                          "conv2d(n=2,c=3,h=64,w=64,k=200,r=3) | add(param[k]) | gelu",
                          "conv2d(n=1,c=16,h=33,w=31,k=24,r=3,stride=2,pad=1,dilation=2) | mul(param[k]) | "
                          "reduce_max(channel) | sigmoid",
                          "conv2d(n=2,c=8,h=20,w=24,k=32,r=3,s=5,bias=false) | tanh",
                          "conv2d(n=2,c=8,h=16,w=16,k=64,r=3,in=nhwc) | reduce_mean(channel) | abs",
                          "conv2d(n=2,c=8,h=16,w=16,k=48,r=3,in=nhwc,out=nhwc) | add(param[k]) | relu",
                          // wide stride-2 convs: chunks of 16 channels, 2 taps per K tile (c16; at
                          // K = 256 in TF32, at K = 128 in 3xTF32, whose stages are twice as large)
                          "conv2d(n=4,c=256,h=28,w=28,k=256,r=3,stride=2,pad=1) | relu",
                          "conv2d(n=4,c=256,h=28,w=28,k=128,r=3,stride=2,pad=1) | relu",
                          // KernelBench's C = 8 convs: 4 taps per K tile (cp 8), 3 K tiles
                          "conv2d(n=2,c=8,h=30,w=30,k=64,r=3,bias=true) | relu | hardswish",
                          // the halo design's edges: W odd (4-byte halo copies) and W = 2 mod 4
                          // (8-byte), C not a multiple of 32, R != S, stride 2 with padding, out=nhwc
                          "conv2d(n=3,c=40,h=21,w=33,k=40,r=1,s=5,stride=2,pad=2) | sigmoid",
                          "conv2d(n=2,c=64,h=36,w=70,k=200,r=3,pad=1,out=nhwc) | add(param[k]) | mish",
                          "conv2d(n=1,c=96,h=20,w=20,k=256,r=3,dilation=2) | reduce_sum(channel) | tanh"}) {
      // One variant per design, tile (bm or tp, bn) and K tile (cp: one tap or several) keeps
      // the run short; stages only change the pipeline depth.
      std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> seen;
      for (auto& v : fused(s, strict)) {
        const bool halo = v.design.starts_with("fused-conv.halo");
        const std::tuple<std::string, int64_t, int64_t, int64_t> key{
            v.design, halo ? param(v, "tp") : param(v, "bm"), param(v, "bn"), halo ? testing::halo_cp(v) : 0};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        all.push_back(std::move(v));
      }
    }
    for (const auto& v : all) EXPECT_EQ(v.design == "fused-conv.halo3x", strict) << v.name;
    expect_all_compile(all, strict ? "awkward shapes, --math fp32 (3xTF32)" : "awkward shapes", strict);
  }
}

TEST(FusedConvCompile, EveryTwoEpilogueWarpgroupVariantCompiles) {
  // e2 variants exist only for chains of costly ops (none on the presets): every one of #31's
  // shape under `mish | mish`, NHWC output, and a reduction, in both math modes.
  for (const bool strict : {false, true}) {
    std::vector<Variant> all;
    for (const char* s : {"conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | mish | mish",
                          "conv2d(n=2,c=40,h=30,w=31,k=72,r=3,pad=1,out=nhwc) | gelu | add(param[k]) | softplus",
                          "conv2d(n=64,c=64,h=256,w=256,k=128,r=3) | silu | tanh | reduce_min(channel) | mul(3)"})
      for (auto& v : fused(s, strict))
        if (v.design.starts_with("fused-conv.halo") && param(v, "epi_wg") == 2) all.push_back(std::move(v));
    expect_all_compile(all, strict ? "two epilogue warpgroups, --math fp32 (3xTF32)" : "two epilogue warpgroups", strict);
  }
}

TEST(FusedConvCompile, Every3xTf32PresetVariantCompilesForSm90a) {
  for (const char* name : {"kernelbench-31", "kernelbench-32"}) {
    const auto vs = fused(*spec::preset_spec(name), true);
    for (const auto& v : vs) EXPECT_EQ(v.design, "fused-conv.halo3x") << v.name;
    expect_all_compile(vs, std::string(name) + ", --math fp32 (3xTF32)", true);
  }
}

// v13 (docs/perf-notes.md): a consumer thread's two MMA rows are one pixel and the one below it,
// so where the filter row advances it takes half of the tap's A fragment from the last tap's
// registers (FT_AREUSE): 2 of every 3 taps of a 3 x 3 filter load 8 values from shared memory
// instead of 16 (on the H200 2-5% of the kernel). A change that lost it (rows no longer paired, or
// taps no longer filter row fastest) would still compile and verify, only slower: counted in the
// PTX of #31's winner, against the same variant with the reuse turned off (-DFT_AREUSE=0).
TEST(FusedConvCompile, TheConsumersReuseHalfOfTheLastTapsFragment) {
  const auto count_lds = [](const gpu::CompileResult& r) {
    size_t n = 0;
    for (size_t at = r.ptx.find("ld.shared"); at != std::string::npos; at = r.ptx.find("ld.shared", at + 1)) ++n;
    return n;
  };
  bool found = false;
  for (const auto& v : fused(*spec::preset_spec("kernelbench-31"))) {
    if (v.name != "fused-conv.halo.p4.n128.s4.e1") continue;
    found = true;
    gpu::CompileOptions on = compile_options(v, "sm_90", false), off = on;
    off.extra.push_back("-DFT_AREUSE=0");
    const auto with = gpu::compile_cuda(v.source, v.name + ".cu", on);
    const auto without = gpu::compile_cuda(v.source, v.name + ".cu", off);
    ASSERT_TRUE(with.ok() && without.ok()) << with.log << without.log;
    // Two 32-channel chunks (C = 64), each with 6 taps past their filter row's first: 8 loads fewer
    // each.
    EXPECT_EQ(count_lds(without) - count_lds(with), 2u * 6u * 8u) << count_lds(without) << " " << count_lds(with);
  }
  EXPECT_TRUE(found) << "#31's winner is no longer in the space: pick another variant for this check";
}

// v14 (docs/perf-notes.md): below 17 input channels a K tile holds 32/cp taps, so KernelBench's
// C = 8 convs (3 x 3) issue 3 K tiles of MMAs per column tile instead of 9. A change that lost it
// would still verify, only three times slower in the MMAs: counted in the PTX of the same point
// at c8 and c32, in both math modes (3xTF32 issues three wgmma per K step).
TEST(FusedConvCompile, SeveralTapsPerKTileIssueAThirdOfTheMmas) {
  const auto count_mma = [](const gpu::CompileResult& r) {
    size_t n = 0;
    for (size_t at = r.ptx.find("wgmma.mma_async"); at != std::string::npos; at = r.ptx.find("wgmma.mma_async", at + 1)) ++n;
    return n;
  };
  for (const bool strict : {false, true}) {
    std::map<int64_t, size_t> mmas;  // cp -> wgmma instructions in the PTX
    for (const auto& v : fused("conv2d(n=128,c=8,h=128,w=128,k=64,r=3,bias=true) | relu | hardswish", strict)) {
      if (!v.name.starts_with(strict ? "fused-conv.halo3x.p4.n64.s4.e1." : "fused-conv.halo.p4.n64.s4.e1.")) continue;
      const auto r = gpu::compile_cuda(v.source, v.name + ".cu", compile_options(v, "sm_90", strict));
      ASSERT_TRUE(r.ok()) << v.name << "\n" << r.log;
      mmas[param(v, "cp")] = count_mma(r);
    }
    ASSERT_EQ(mmas.size(), 2u) << "c8 and c32 of p4.n64.s4.e1 are no longer in the space: pick another point";
    // one chunk, unrolled: 9 K tiles x 4 K steps at c32, 3 x 4 at c8 (x 3 in 3xTF32)
    const size_t per_step = strict ? 3 : 1;
    EXPECT_EQ(mmas.at(32), 9 * 4 * per_step) << strict;
    EXPECT_EQ(mmas.at(8), 3 * 4 * per_step) << strict;
  }
}

TEST(FusedConvRecord, StoredWinnerIsTracedAndItsCubinRebuiltForSm90a) {
  const spec::Problem problem = exporter::testing::preset("kernelbench-32");
  // an fp32 winner is a 3xTF32 variant: what `tune --math fp32` generates
  GenerateOptions strict;
  strict.strict_fp32 = true;
  strict.problem_text = spec::canonical(problem);
  const Variant v = exporter::testing::pick(generate_variants(problem, sm90(), strict), "fused-conv.halo3x");
  db::WinnerRecord w = exporter::testing::winner_for(problem, v, true, "fp32");
  w.env.templates_hash = fusetune::templates::templates_hash();
  w.env.nvrtc = gpu::nvrtc_version();
  EXPECT_NE(w.compile_options.find("--gpu-architecture=sm_90a"), std::string::npos) << w.compile_options;
  EXPECT_EQ(trust::check_winner(w), "");
  const trust::Provenance traced = trust::check_provenance(w);
  EXPECT_TRUE(traced.traced()) << traced.why;

  // The options of a plain sm_90 compile are not what fusetune passes for this variant.
  db::WinnerRecord plain = w;
  gpu::CompileOptions o;
  o.strict_fp32 = true;
  o.ptxas_verbose = false;
  plain.compile_options = fmt::format("{}", fmt::join(gpu::nvrtc_options(o), " "));
  EXPECT_EQ(trust::check_provenance(plain).verdict, trust::Provenance::Verdict::forged);

  // A record without binaries: the export compiles it again, for sm_90a.
  db::WinnerRecord bare = w;
  bare.cubin.clear();
  bare.ptx.clear();
  EXPECT_EQ(exporter::export_cubin(problem, bare), w.cubin);
  EXPECT_NE(exporter::export_ptx(problem, bare).find(".target sm_90a"), std::string::npos);
}

}  // namespace
}  // namespace fusetune::codegen
