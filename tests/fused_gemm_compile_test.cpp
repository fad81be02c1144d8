// The fused GEMM (issue 45), GPU-free: where the design applies, what its space offers, that every
// variant's plan passes the worker's checks, and that its variants compile with NVRTC for sm_90a
// through the tuner's own options, without spills, without ptxas serializing its MMAs, and within
// the 5 s a variant may take.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "codegen/compile_target.hpp"
#include "codegen/designs.hpp"
#include "codegen/gemm_epilogue.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "gpu/compiler.hpp"
#include "spec/parser.hpp"
#include "compile_every.hpp"

namespace fusetune::codegen {
namespace {

constexpr double kMaxCompileMs = 5000.0;

using testing::compile_every;

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

int64_t param(const Variant& v, const std::string& name) {
  for (const auto& [n, value] : v.params)
    if (n == name) return value;
  ADD_FAILURE() << v.name << " has no parameter " << name;
  return -1;
}

std::vector<Variant> gemm_variants(const std::string& spec_text, bool strict_fp32 = false,
                                   const gpu::DeviceLimits& limits = sm90()) {
  GenerateOptions o;
  o.strict_fp32 = strict_fp32;
  std::vector<Variant> out;
  for (auto& v : generate_variants(spec::parse(spec_text), limits, o))
    if (v.candidate == Candidate::fused_gemm) out.push_back(std::move(v));
  return out;
}

TEST(FusedGemmSpace, AppliesToLinearAndPlainMatmulChainsOnSm90Only) {
  EXPECT_FALSE(gemm_variants("linear(m=1024,k=8192,n=8192) | relu").empty());
  EXPECT_FALSE(gemm_variants("matmul(m=130,k=68,n=96) | relu").empty());
  EXPECT_FALSE(gemm_variants("linear(m=64,k=36,n=70,bias=false) | reduce_max(1) | sigmoid").empty());
  // not on sm_80 (no wgmma), not for epilogues it cannot apply (a softmax: issue 46), batches, trans_a, or K
  // rows that 16-byte copies cannot read
  EXPECT_TRUE(gemm_variants("linear(m=1024,k=8192,n=8192) | relu", false, *gpu::limits_for_arch("sm_80")).empty());
  // (an epilogue it cannot take gets its GEMM alone, the stage kernels after it: fused-gemm.stages)
  for (const auto& v : gemm_variants("linear(m=1024,k=8192,n=8192) | softmax(1)"))
    EXPECT_EQ(v.design, "fused-gemm.stages") << v.name;
  EXPECT_TRUE(gemm_variants("matmul(batch=4,m=8,k=16,n=32,trans_b=true) | relu").empty());
  EXPECT_TRUE(gemm_variants("matmul(m=64,k=16,n=32,trans_a=true) | relu").empty());
  EXPECT_TRUE(gemm_variants("linear(m=100,k=30,n=50) | relu").empty());
}

// Any spelling of the epilogue: KernelBench #22 (a logsumexp over the features, a value named
// after it), #64 (logsumexp, then ops), #70 (the GEMM's output named and added back), #80 are the
// kernel's; norms, softmax, pooling, extra inputs and reductions over other dims are not.
TEST(FusedGemmSpace, TheEpilogueItAppliesInEitherForm) {
  const char* const kb22 = "linear(m=1024,k=8192,n=8192) | mul(2) | mul(2) | clamp(-10,10) | logsumexp(1) | as a | "
                           "mish | mul(a)";
  const auto e22 = gemm_epilogue(spec::parse(kb22));
  ASSERT_TRUE(e22.has_value());
  EXPECT_EQ(e22->reduce, GemmReduce::logsumexp);
  EXPECT_EQ(e22->pre.size(), 3u);
  ASSERT_EQ(e22->post.size(), 3u);
  EXPECT_EQ(e22->post[0].named, 0);
  const std::string code = render_gemm_epilogue(*e22, ChanLayout{8192, true});
  EXPECT_NE(code.find("const float nv0 = v;"), std::string::npos) << code;
  EXPECT_NE(code.find("v * nv0"), std::string::npos) << code;
  EXPECT_EQ(code.find("ft_reduce_step"), std::string::npos) << "logsumexp is ft_lse.cuh's:\n" << code;
  for (const char* ok : {"linear(m=1024,k=8192,n=8192) | logsumexp(1) | leaky_relu(0.01) | gelu",
                         "linear(m=1024,k=8192,n=8192) | as a | sigmoid | mul(2) | add(a)",
                         "linear(m=64,k=32,n=48) | reduce_max(1,keepdim=false)",
                         // #80: the max, less its own mean over the one remaining feature
                         "linear(m=1024,k=8192,n=8192) | reduce_max(1) | as a | sub(a) | gelu"})
    EXPECT_TRUE(gemm_epilogue(spec::parse(ok)).has_value()) << ok;
  for (const char* no : {"linear(m=1024,k=8192,n=8192) | layer_norm(1,affine=false) | add(input1) | mul(input1)",
                         "linear(m=1024,k=8192,n=8192) | gelu | softmax(1)",
                         "linear(m=1024,k=8192,n=8192) | avg_pool1d(16) | gelu | reduce_max(1,keepdim=false)",
                         "linear(m=64,k=32,n=48) | reduce_sum(0)",
                         "linear(m=64,k=32,n=48) | as a | reduce_max(1) | add(a)"})
    EXPECT_FALSE(gemm_epilogue(spec::parse(no)).has_value()) << no;
  // ... and the variants of #22 read its logsumexp helpers and keep two floats a row per split
  for (const auto& v : gemm_variants(kb22)) {
    EXPECT_EQ(param(v, "reduce_lse"), 1) << v.name;
    EXPECT_NE(v.source.find("ft_lse_add"), std::string::npos) << v.name;
    if (const auto part = v.find_buffer("part")) {
      EXPECT_EQ(v.buffer(*part).floats(), 2 * 1024 * param(v, "csplit")) << v.name;
    }
  }
}

TEST(FusedGemmSpace, MathModeChoosesTheDesignAndReductionsGetColumnSplits) {
  for (const auto& v : gemm_variants("linear(m=1024,k=8192,n=8192) | relu")) {
    EXPECT_EQ(v.design, "fused-gemm") << v.name;
    EXPECT_EQ(param(v, "csplit"), 1) << v.name;
  }
  std::set<int64_t> bns, splits;
  for (const auto& v : gemm_variants("linear(m=1024,k=8192,n=8192) | reduce_sum(1)", true)) {
    EXPECT_EQ(v.design, "fused-gemm3x") << v.name;
    EXPECT_LE(param(v, "bn"), 128) << v.name << ": ptxas serializes 3xTF32's MMAs at bn 256";
    bns.insert(param(v, "bn"));
    splits.insert(param(v, "csplit"));
  }
  EXPECT_EQ(bns, (std::set<int64_t>{64, 128}));
  // M = 1024 is 8 row tiles: splitting the columns is what fills the GPU
  EXPECT_EQ(splits, (std::set<int64_t>{1, 2, 4, 8, 16, 32}));  // 8 row tiles x 32 = 256 blocks, two waves
  // one row tile (KernelBench #56's 128 x 32768 x 32768): a split per column tile fills the SMs
  std::set<int64_t> wide;
  for (const auto& v : gemm_variants("linear(m=128,k=32768,n=32768) | sigmoid | reduce_sum(1)", true))
    wide.insert(param(v, "csplit"));
  EXPECT_EQ(wide, (std::set<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256}));
  // 16384 rows are 128 row tiles: still short of 132 SMs; 32768 rows fill them, no splits
  for (const auto& v : gemm_variants("linear(m=32768,k=1024,n=4096) | reduce_max(1)"))
    EXPECT_EQ(param(v, "csplit"), 1) << v.name;
}

TEST(FusedGemmPlan, EveryVariantPassesTheWorkersChecks) {
  for (const char* s : {"linear(m=1024,k=8192,n=8192) | group_norm(16) | hardtanh(-2,2)",
                        "linear(m=1024,k=8192,n=8192) | batch_norm | add(param[1]) | div(1) | silu","linear(m=1024,k=8192,n=8192) | sub(2) | mul(1.5) | relu",
                        "linear(m=1024,k=8192,n=8192,bias=false) | div(2) | reduce_sum(1) | mul(1.5)",
                        "linear(m=300,k=200,n=191) | add(param[k]) | mul(param[k]) | gelu",
                        "matmul(m=130,k=68,n=96) | relu"}) {
    const spec::Problem p = spec::parse(s);
    for (const bool strict : {false, true}) {
      const auto vs = gemm_variants(s, strict);
      ASSERT_FALSE(vs.empty()) << s;
      for (const auto& v : vs) {
        EXPECT_EQ(check_variant(v, p), "") << s;
        // W's pack and the channel vectors run once, untimed; the GEMM (and a combine) are timed
        int timed = 0;
        for (const auto& st : v.plan) timed += st.timed ? 1 : 0;
        if (v.design.ends_with(".stages")) {
          // the GEMM, then the stage kernels (at least the norm's or softmax's)
          EXPECT_GE(timed, 2) << v.name;
          EXPECT_EQ(v.plan.at(1).kernel().name, "ft_fused_gemm") << v.name;
          continue;
        }
        EXPECT_EQ(timed, p.reduce && param(v, "csplit") > 1 ? 2 : 1) << v.name;
        EXPECT_FALSE(v.plan.front().timed) << v.name;
      }
    }
  }
}

// sample: every tile width and column split at 3 stages, every depth of the pipeline at bn 64
// (the compiles of all 45 variants of a reduction's space would take CI a minute).
void expect_all_compile(const std::string& spec_text, bool strict_fp32, bool sample = false) {
  auto variants = gemm_variants(spec_text, strict_fp32);
  if (sample)
    std::erase_if(variants, [](const Variant& v) {
      return param(v, "stages") != 3 && !(param(v, "bn") == 64 && param(v, "csplit") == 1);
    });
  ASSERT_FALSE(variants.empty()) << spec_text;
  for (const auto& c : compile_every(variants, strict_fp32)) {
    const Variant& v = *c.variant;
    const auto& r = c.result;
    // per variant on one core; the A fragments are double-buffered so that no register of an MMA
    // in flight is written: ptxas neither serializes the MMAs nor injects waits
    testing::expect_compiled_cleanly(c, kMaxCompileMs);
    EXPECT_LE(r.registers, 65536 / kFusedGemmThreads) << v.name;
    if (!v.design.ends_with(".stages")) {  // (the stage kernels' block folds have their own)
      EXPECT_EQ(r.smem_bytes, 0) << v.name << ": static shared memory besides FT_SMEM_BYTES";
    }
  }
}

// KernelBench level 2's shapes (#9 elementwise, #14 a reduction at M = 1024, #56 at M = 128) and
// the edges: K not a multiple of 32, N odd, a matmul's B (K, N), no bias with parameters, tiny K.
TEST(FusedGemmCompile, KernelBenchShapesCompileInBothMathModes) {
  for (const bool strict : {false, true}) {
    expect_all_compile("linear(m=1024,k=8192,n=8192) | sub(2) | mul(1.5) | relu", strict, true);
    expect_all_compile("linear(m=1024,k=8192,n=8192,bias=false) | div(2) | reduce_sum(1) | mul(1.5)", strict, true);
    expect_all_compile("linear(m=128,k=32768,n=32768) | sigmoid | reduce_sum(1)", strict, true);
    // the GEMM alone before stage kernels, in one source with them
    expect_all_compile("linear(m=1024,k=8192,n=8192) | group_norm(16) | hardtanh(-2,2)", strict);
  }
}

TEST(FusedGemmCompile, AwkwardShapesCompileInBothMathModes) {
  for (const bool strict : {false, true}) {
    expect_all_compile("linear(m=300,k=200,n=191) | add(param[k]) | gelu", strict, true);
    expect_all_compile("linear(m=200,k=96,n=300) | mul(2) | logsumexp(1) | as a | mish | mul(a)", strict, true);
    expect_all_compile("linear(m=100,k=64,n=80) | as a | sigmoid | mul(2) | add(a)", strict, true);
    expect_all_compile("matmul(m=130,k=68,n=96) | relu", strict, true);
    expect_all_compile("linear(m=64,k=36,n=70,bias=false) | mul(param[k]) | reduce_max(1) | sigmoid", strict, true);
  }
}

}  // namespace
}  // namespace fusetune::codegen
