// The test-only planted variants (FUSETUNE_TEST_PLANT) exist, differ from the real ones only
// where intended, and compile: the GPU tests that prove verification, fault and hang handling
// depend on them.
#include <gtest/gtest.h>

#include "codegen/generate.hpp"
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
        EXPECT_EQ(v.plan.back().kind, fusetune::codegen::StepKind::kernel);
        EXPECT_NE(v.plan.back().kernel_name.find("ft_planted_"), std::string::npos);
      }
    }
    EXPECT_EQ(wrong, 2);
    for (const auto& v : all) {
      if (v.name.find("planted") == std::string::npos) {
        EXPECT_EQ(v.source.find("FT_PLANT_CHANNEL_SHIFT 1"), std::string::npos) << v.name;
      }
    }
    for (const auto& r : fusetune::tune::compile_all(planted, *fusetune::gpu::limits_for_arch("sm_90"), {}))
      EXPECT_EQ(r.status, fusetune::tune::Status::ok) << r.variant.name << ": " << r.reason;
  }
}

}  // namespace
