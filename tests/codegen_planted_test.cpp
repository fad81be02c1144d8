// The test-only planted variants (FUSETUNE_TEST_PLANT) exist, differ from the real ones only
// where intended, and compile: the GPU tests that prove verification, fault and hang handling
// depend on them.
#include <gtest/gtest.h>

#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "spec/parser.hpp"
#include "tune/compile_all.hpp"

namespace {

using fusetune::codegen::Variant;

std::vector<Variant> generate(const char* spec, const std::string& plant) {
  fusetune::codegen::GenerateOptions o;
  o.plant = plant;
  return fusetune::codegen::generate_variants(fusetune::spec::parse(spec), *fusetune::gpu::limits_for_arch("sm_90"), o);
}

TEST(CodegenPlanted, NoneUnlessAsked) {
  for (const auto& v : generate("conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k])", ""))
    EXPECT_EQ(v.name.find("planted"), std::string::npos) << v.name;
}

TEST(CodegenPlanted, WrongFaultHangCompile) {
  for (const char* spec : {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
                           "conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | mul(2) | reduce_min"}) {
    SCOPED_TRACE(spec);
    const auto all = generate(spec, "wrong,fault,hang");
    std::vector<Variant> planted;
    for (const auto& v : all)
      if (v.name.find("planted") != std::string::npos) planted.push_back(v);
    ASSERT_EQ(planted.size(), 4u);  // wrong x {nchw, nhwc}, fault, hang
    int wrong = 0;
    for (const auto& v : planted) {
      if (v.name.find("planted-wrong") != std::string::npos) {
        ++wrong;
        EXPECT_NE(v.source.find("#define FT_PLANT_CHANNEL_SHIFT 1"), std::string::npos);
      } else {
        ASSERT_EQ(v.plan.back().kind(), fusetune::codegen::StepKind::kernel);
        EXPECT_NE(v.plan.back().kernel().name.find("ft_planted_"), std::string::npos);
      }
    }
    EXPECT_EQ(wrong, 2);
    for (const auto& v : all) {
      if (v.name.find("planted") == std::string::npos) {
        EXPECT_EQ(v.source.find("FT_PLANT_CHANNEL_SHIFT 1"), std::string::npos) << v.name;
      }
    }
    for (const auto& r : fusetune::tune::compile_all(planted, *fusetune::gpu::limits_for_arch("sm_90"), {}))
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason;
  }
}

// The subtle bugs of the trustworthy-verdicts issue: each planted in every design it applies to,
// each a sound plan (so only verification can reject it), each compiling.
TEST(CodegenPlanted, SubtleBugsArePlantedWhereTheyApply) {
  struct Case {
    const char* spec;
    std::vector<std::string> expected;  // planted variant names
  };
  const std::vector<Case> cases = {
      {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
       {"epilogue.nchw.b128.v1.e1.planted-bias", "epilogue.nchw.b128.v1.e1.planted-row",
        "epilogue.nchw.b128.v1.e1.planted-twice", "epilogue.nchw.b128.v1.e1.planted-tap",
        // the NHWC -> NCHW design stores through the fused transpose: no row plant there
        "epilogue.nhwc.t32.v1.o1.b128.planted-bias", "epilogue.nhwc.t32.v1.o1.b128.planted-twice",
        "epilogue.nhwc.t32.v1.o1.b128.planted-tap"}},
      {"conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | mul(2) | reduce_min",
       {"epilogue.nchw.t32.v1.c1.s2.planted-bias", "epilogue.nchw.t32.v1.c1.s2.planted-row",
        "epilogue.nchw.t32.v1.c1.s2.planted-reduce", "epilogue.nchw.t32.v1.c1.s2.planted-twice",
        "epilogue.nchw.t32.v1.c1.s2.planted-tap", "epilogue.nhwc.l4.v1.c1.b256.planted-bias",
        "epilogue.nhwc.l4.v1.c1.b256.planted-row", "epilogue.nhwc.l4.v1.c1.b256.planted-reduce",
        "epilogue.nhwc.l4.v1.c1.b256.planted-twice", "epilogue.nhwc.l4.v1.c1.b256.planted-tap"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    const auto problem = fusetune::spec::parse(c.spec);
    std::vector<Variant> planted;
    std::vector<std::string> names;
    for (const auto& v : generate(c.spec, "subtle")) {
      if (v.name.find("planted") == std::string::npos) continue;
      planted.push_back(v);
      names.push_back(v.name);
      EXPECT_EQ(fusetune::codegen::check_variant(v, problem), "") << v.name;
    }
    EXPECT_EQ(names, c.expected);
    for (const auto& r : fusetune::tune::compile_all(planted, *fusetune::gpu::limits_for_arch("sm_90"), {}))
      EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason << r.log_excerpt;
  }
}

// The dropped tap: a one-time step in front makes the filters the conv reads.
TEST(CodegenPlanted, DroppedTapFeedsTheConvThroughAPlantedCopy) {
  for (const auto& v : generate("conv2d(n=2,c=4,h=12,w=12,k=8,r=3) | relu", "tap")) {
    if (v.name.find("planted-tap") == std::string::npos) continue;
    ASSERT_EQ(v.plan.front().kind(), fusetune::codegen::StepKind::kernel);
    EXPECT_EQ(v.plan.front().kernel().name, "ft_planted_drop_tap");
    EXPECT_FALSE(v.plan.front().timed);
    for (const auto& st : v.plan) {
      if (st.kind() == fusetune::codegen::StepKind::cudnn_conv && st.conv().layout == fusetune::spec::Layout::nchw) {
        EXPECT_EQ(v.buffer(st.conv().filters).name, "w_planted") << v.name;
      }
      if (st.kind() == fusetune::codegen::StepKind::kernel && st.kernel().name == "ft_transform_kcrs_to_krsc") {
        EXPECT_EQ(v.buffer(st.kernel().args[0]).name, "w_planted") << v.name;
      }
    }
  }
}

}  // namespace
