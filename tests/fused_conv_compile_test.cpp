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
#include <atomic>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

#include "codegen/compile_target.hpp"
#include "codegen/embedded_templates.hpp"
#include "codegen/generate.hpp"
#include "export/export.hpp"
#include "export_test_winners.hpp"
#include "plan_test_support.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::codegen {
namespace {

constexpr double kMaxCompileMs = 5000.0;

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

using testing::param;

std::vector<Variant> fused(const std::string& spec_text) {
  return testing::candidate_variants(spec::parse(spec_text), Candidate::fused_conv, sm90());
}

struct Compiled {
  const Variant* variant = nullptr;
  gpu::CompileResult result;
};

// On two threads (the CI machine's cores), as the tuner would: sm_90 in, sm_90a out.
std::vector<Compiled> compile_every(const std::vector<Variant>& variants, bool strict_fp32) {
  std::vector<Compiled> out(variants.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < variants.size(); i = next++) {
      const gpu::CompileOptions o = compile_options(variants[i], "sm_90", strict_fp32);
      out[i] = Compiled{&variants[i], gpu::compile_cuda(variants[i].source, variants[i].name + ".cu", o)};
    }
  };
  auto a = std::async(std::launch::async, worker);
  auto b = std::async(std::launch::async, worker);
  a.get();
  b.get();
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
    EXPECT_TRUE(r.ok()) << v.name << "\n" << r.log;
    EXPECT_NE(std::find(r.options.begin(), r.options.end(), "--gpu-architecture=sm_90a"), r.options.end()) << v.name;
    EXPECT_LE(r.compile_ms, kMaxCompileMs) << v.name;
    EXPECT_EQ(r.spill_stores, 0) << v.name << "\n" << r.log;
    EXPECT_EQ(r.spill_loads, 0) << v.name << "\n" << r.log;
    // The space's register constraint: min(255, 65536 / threads) per thread.
    const int64_t threads = 128 * (param(v, "bm") / 64 + 1);
    EXPECT_LE(r.registers, std::min<int64_t>(255, 65536 / threads)) << v.name;
    EXPECT_EQ(r.smem_bytes, 0) << v.name << ": static shared memory besides FT_SMEM_BYTES";
    for (const char* k : {"ft_fused_conv_pack", "ft_fused_conv"})
      EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), k), r.kernel_names.end()) << v.name << " " << k;
    slowest = std::max(slowest, r.compile_ms);
    max_regs = std::max(max_regs, r.registers);
  }
  std::printf("[ fused-conv ] %s: %zu variants compiled for sm_90a, slowest %.1f s, max %d registers\n", what.c_str(),
              results.size(), slowest / 1000.0, max_regs);
}

TEST(FusedConvCompile, EveryPreset31VariantCompilesForSm90a) {
  expect_all_compile(fused(*spec::preset_spec("kernelbench-31")), "kernelbench-31");
}

TEST(FusedConvCompile, EveryPreset32VariantCompilesForSm90a) {
  expect_all_compile(fused(*spec::preset_spec("kernelbench-32")), "kernelbench-32");
}

TEST(FusedConvCompile, AwkwardShapesCompileInBothMathModes) {
  std::vector<Variant> all;
  for (const char* s : {"conv2d(n=2,c=1,h=40,w=36,k=16,r=3) | relu",
                        "conv2d(n=2,c=3,h=64,w=64,k=200,r=3) | add(param[k]) | gelu",
                        "conv2d(n=1,c=16,h=33,w=31,k=24,r=3,stride=2,pad=1,dilation=2) | mul(param[k]) | "
                        "reduce_max(channel) | sigmoid",
                        "conv2d(n=2,c=8,h=20,w=24,k=32,r=3,s=5,bias=false) | tanh",
                        "conv2d(n=2,c=8,h=16,w=16,k=64,r=3,in=nhwc) | reduce_mean(channel) | abs",
                        "conv2d(n=2,c=8,h=16,w=16,k=48,r=3,in=nhwc,out=nhwc) | add(param[k]) | relu"}) {
    // One variant per (bm, bn) keeps the run short; stages only change the pipeline depth.
    std::vector<std::pair<int64_t, int64_t>> seen;
    for (auto& v : fused(s)) {
      const std::pair<int64_t, int64_t> key{param(v, "bm"), param(v, "bn")};
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      all.push_back(std::move(v));
    }
  }
  expect_all_compile(all, "awkward shapes");
  expect_all_compile(all, "awkward shapes, --math fp32", true);
}

TEST(FusedConvRecord, StoredWinnerIsTracedAndItsCubinRebuiltForSm90a) {
  const spec::Problem problem = exporter::testing::preset("kernelbench-32");
  const Variant v = exporter::testing::pick(exporter::testing::variants_of(problem), "fused-conv");
  db::WinnerRecord w = exporter::testing::winner_for(problem, v, true, "fp32");
  w.env.templates_hash = templates_hash();
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
