// `fused-conv.halo.stages` (GPU-free): a version-2 conv2d problem's conv as the halo fused-conv
// kernel (conv + bias; several taps per K tile below 17 input channels), then the stage kernels
// of its epilogue (norms, pooling, spatial means ...), in one source. Where it applies, what its
// plan binds, that the worker's checks pass, and that every variant compiles for sm_90a through
// the tuner's options in both math modes without spills or serialized MMAs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "compile_every.hpp"
#include "plan_test_support.hpp"
#include "spec/parser.hpp"

namespace fusetune::codegen {
namespace {

constexpr double kMaxCompileMs = 5000.0;  // per variant, CPU time of its compiling thread

using testing::compile_every;
using testing::param;

gpu::DeviceLimits sm90() { return *gpu::limits_for_arch("sm_90"); }

std::vector<Variant> conv_stage_variants(const std::string& spec_text, bool strict_fp32 = false,
                                         const gpu::DeviceLimits& limits = sm90()) {
  GenerateOptions o;
  o.strict_fp32 = strict_fp32;
  std::vector<Variant> out;
  for (auto& v : generate_variants(spec::parse(spec_text), limits, o))
    if (v.candidate == Candidate::fused_conv) out.push_back(std::move(v));
  return out;
}

// KernelBench level 2's Conv2d problems that need a stage past the conv's epilogue (#67: gelu then
// a spatial mean; #21: a group norm; #85: group norm, max pool; #17: instance norm, C = 64), at
// small sizes; the C = 8 ones take K tiles of 4 taps.
const char* const kProblems[] = {
    "conv2d(n=4,c=8,h=34,w=34,k=64,r=3) | gelu | reduce_mean(spatial,keepdim=false)",
    "conv2d(n=4,c=8,h=34,w=34,k=32,r=3) | add(param[k]) | mul(param[k]) | sigmoid | group_norm(8)",
    "conv2d(n=4,c=8,h=34,w=34,k=64,r=3) | group_norm(16) | mul(param[k]) | max_pool2d(4) | clamp(0,1)",
    "conv2d(n=2,c=64,h=34,w=34,k=128,r=3) | instance_norm | div(2)",
};

TEST(FusedConvStages, Conv2dProblemsWithStagesGetTheFusedConvAsTheirMainStep) {
  for (const char* s : kProblems) {
    for (const bool strict : {false, true}) {
      const auto vs = conv_stage_variants(s, strict);
      ASSERT_FALSE(vs.empty()) << s;
      std::set<int64_t> cps;
      for (const auto& v : vs) {
        EXPECT_EQ(v.design, strict ? "fused-conv.halo3x.stages" : "fused-conv.halo.stages") << v.name;
        EXPECT_TRUE(v.name.starts_with(v.design + ".p4.")) << v.name;  // the presets' winners' tile
        EXPECT_EQ(param(v, "stages"), 6) << v.name;
        EXPECT_TRUE(v.arch_specific) << v.name;
        cps.insert(testing::halo_cp(v));
      }
      // below 17 channels the packed K tiles are among them
      if (spec::parse(s).conv.c <= 16) {
        EXPECT_TRUE(cps.contains(8)) << s;
      }
    }
  }
  // images narrower than a 4 x 32 tile take the nearest tile the space has
  for (const auto& v : conv_stage_variants("conv2d(n=2,c=8,h=16,w=18,k=16,r=3) | group_norm(4)"))
    EXPECT_TRUE(v.name.starts_with("fused-conv.halo.stages.p8.")) << v.name;
  // not on sm_80 (no wgmma), not for a transposed conv, a grouped conv or a conv3d
  EXPECT_TRUE(conv_stage_variants(kProblems[0], false, *gpu::limits_for_arch("sm_80")).empty());
  EXPECT_TRUE(conv_stage_variants("conv_transpose2d(n=2,c=8,h=16,w=16,k=16,r=3) | group_norm(4)").empty());
  EXPECT_TRUE(conv_stage_variants("conv2d(n=2,c=8,h=16,w=16,k=16,r=3,groups=2) | group_norm(4)").empty());
  EXPECT_TRUE(conv_stage_variants("conv3d(n=2,c=8,d=6,h=16,w=16,k=16,t=3,r=3) | group_norm(4)").empty());
}

TEST(FusedConvStages, ThePlanPacksTheFiltersUntimedThenRunsTheConvThenTheStages) {
  for (const char* s : kProblems) {
    const spec::Problem p = spec::parse(s);
    for (const bool strict : {false, true}) {
      for (const auto& v : conv_stage_variants(s, strict)) {
        SCOPED_TRACE(v.name);
        EXPECT_EQ(check_variant(v, p), "");
        ASSERT_GE(v.plan.size(), 3u);
        const KernelStep& pack = v.plan[0].kernel();
        const KernelStep& conv = v.plan[1].kernel();
        EXPECT_EQ(pack.name, "ft_fused_conv_pack");
        EXPECT_FALSE(v.plan[0].timed);
        EXPECT_EQ(v.buffer(pack.args[0]).name, "w");
        EXPECT_EQ(conv.name, "ft_fused_conv");
        EXPECT_TRUE(v.plan[1].timed);
        // x, the packed filters, the main output (what the first stage reads), the bias
        EXPECT_EQ(v.buffer(conv.args[0]).name, "x");
        EXPECT_EQ(v.buffer(conv.args[1]).name, "wpack");
        EXPECT_EQ(v.buffer(conv.args[3]).name, "bias");
        EXPECT_EQ(conv.writes, (std::vector<size_t>{2}));
        const BufferRef y = std::get<BufferRef>(conv.args[2]);
        bool read_after = false;
        for (size_t i = 2; i < v.plan.size(); ++i) {
          EXPECT_TRUE(v.plan[i].timed);
          for (const KernelArg& a : v.plan[i].kernel().args)
            if (const BufferRef* r = std::get_if<BufferRef>(&a); r && *r == y) read_after = true;
        }
        EXPECT_TRUE(read_after) << "no stage reads the conv's output";
        // one source: the stage kernels', then the conv's (the compile test finds every kernel in it)
        EXPECT_LT(v.source.find("// ---- stages/stage_kernels.cu"), v.source.find("// ---- fused_conv_halo.cu"));
        EXPECT_NE(v.source.find(strict ? "#define FT_SPLIT 1" : "#define FT_SPLIT 0"), std::string::npos);
      }
    }
  }
}

TEST(FusedConvStages, EveryVariantCompilesInBothMathModes) {
  for (const bool strict : {false, true}) {
    std::vector<Variant> all;
    for (const char* s : {kProblems[0], kProblems[2], kProblems[3]})
      for (auto& v : conv_stage_variants(s, strict)) all.push_back(std::move(v));
    ASSERT_FALSE(all.empty());
    for (const auto& c : compile_every(all, strict)) testing::expect_compiled_cleanly(c, kMaxCompileMs);
  }
}

}  // namespace
}  // namespace fusetune::codegen
