// The TF32 rule through the version-2 stages (docs/verification.md, "The version-2 stages"):
// its values are the float64 reference's; a correct TF32 pipeline (inputs rounded to TF32,
// every stage's output stored in fp32) stays inside every element's bound and under the rel-L2
// limit on every construct; wrong pipelines that a kernel could plausibly be (a norm over the
// wrong groups, the unbiased variance, a softmax over the wrong dim, avg pooling's other
// divisor, x * sigmoid(sigmoid(x)) for x * sigmoid(x), ...) fail it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "reference/bounds.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/model_bounds.hpp"
#include "reference/model_data.hpp"
#include "reference/model_reference.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"
#include "tf32_emulation.hpp"

namespace fusetune::reference {
namespace {

// Every construct of the general form, on small shapes, and two chain forms.
const std::vector<std::string> kSpecs = {
    "conv2d(n=2,c=4,h=8,w=8,k=8,r=3) | min(0.5) | add(param[k]) | mul(2)",
    "linear(m=16,k=32,n=24) | gelu | reduce_sum(1) | mul(1.5)",
    "conv2d(n=2,c=4,h=8,w=8,k=8,r=3,pad=1) | group_norm(4) | relu | avg_pool2d(kernel=3,stride=2,pad=1)",
    "conv2d(n=4,c=4,h=6,w=6,k=8,r=3) | batch_norm | as a | sigmoid | mul(a) | max_pool2d(2)",
    "conv2d(n=2,c=4,h=8,w=8,k=8,r=3) | instance_norm(affine=true) | softmax(1) | mul(4)",
    "conv3d(n=2,c=2,d=5,h=5,w=5,k=4,r=3) | logsumexp(1) | reduce_mean(2,3,4) | tanh",
    "conv_transpose2d(n=2,c=4,h=4,w=4,k=4,r=3,stride=2,pad=1,out_pad=1,groups=2) | as x0 | add(param[k]) | add(x0) | "
    "mul(x0) | add(x0)",
    "conv_transpose3d(n=1,c=4,d=3,h=3,w=3,k=4,r=3,stride=2,pad=1) | layer_norm(3) | gelu | mul(0.5)",
    "linear(m=16,k=32,n=24) | layer_norm(1) | log_softmax(1) | add(param[1])",
    "matmul(batch=2,m=8,k=16,n=12,trans_b=true) | add(input1) | mul(input1) | reduce_max(2,keepdim=false)",
    "linear(m=16,k=64,n=32) | max_pool1d(2) | avg_pool1d(kernel=3,stride=1,pad=1,count_include_pad=false) | "
    "logsumexp(1,keepdim=false)",
    "conv2d(n=2,c=4,h=8,w=8,k=8,r=3) | reduce_mean(2,3) | add(param[k]) | logsumexp(1) | mul(10)",
    "linear(m=16,k=32,n=24) | as a | div(2) | add(a) | rdiv(1) | as b | min(a) | max(b) | sub(a)",
};

ModelData rounded_to_tf32(ModelData d) {
  for (float& v : d.input) v = testing::tf32_round(v, false);
  for (float& v : d.weight) v = testing::tf32_round(v, false);
  return d;
}

// The epilogue of `spec` run in fp32 on the main output of a correct TF32 kernel for data d.
std::vector<double> tf32_pipeline(const std::string& spec, const ModelData& d) {
  const spec::Problem p = spec::parse(spec);
  return epilogue_reference(p, d, main_output(p, rounded_to_tf32(d)), true);
}

GpuErrorStats judge_against(const BoundedReference& ref, const std::vector<double>& out) {
  std::vector<float> f(out.begin(), out.end());
  return compare_bounded(f.data(), ref.values.data(), ref.bound.data(), ref.var.data(), f.size(), MathMode::tf32);
}

bool passes(const GpuErrorStats& s) { return s.mismatches == 0 && s.nonfinite == 0 && s.rel_l2 <= s.rel_l2_limit; }

TEST(ModelBounds, ValuesAreTheFloat64Reference) {
  for (const std::string& text : kSpecs) {
    SCOPED_TRACE(text);
    const spec::Problem p = spec::parse(text);
    const ModelData d = draw_model_data(p, 3);
    const BoundedReference b = model_reference_with_bounds(p, d);
    const std::vector<double> ref = model_reference(p, d);
    ASSERT_EQ(b.values.size(), ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(b.values[i], ref[i], 1e-12 * std::max(1.0, std::fabs(ref[i]))) << i;
      EXPECT_GE(b.bound[i], 0.0f);
    }
  }
}

TEST(ModelBounds, Conv2dChainsGetTheBoundsOfTheVersion1Rule) {
  // The same numbers through reference_with_bounds (cpu_reference.hpp): equal up to its fp32
  // storage of the conv's E0 and V0 before the epilogue reads them.
  const spec::Problem p = spec::parse(kSpecs[0]);
  const ModelData d = draw_model_data(p, 5);
  ProblemData pd;
  pd.x = d.input;
  pd.w = d.weight;
  pd.chan = d.bias;
  for (const auto& param : d.params) pd.chan.insert(pd.chan.end(), param.begin(), param.end());
  const BoundedReference v1 = reference_with_bounds(p, pd);
  const BoundedReference v2 = model_reference_with_bounds(p, d);
  ASSERT_EQ(v1.bound.size(), v2.bound.size());
  for (std::size_t i = 0; i < v1.bound.size(); ++i) {
    EXPECT_NEAR(v2.bound[i], v1.bound[i], 1e-5 * v1.bound[i]) << i;
    EXPECT_NEAR(v2.var[i], v1.var[i], 1e-5 * v1.var[i]) << i;
  }
}

TEST(ModelBounds, ACorrectTf32PipelinePassesEveryConstruct) {
  for (const std::string& text : kSpecs) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(text + " seed " + std::to_string(seed));
      const spec::Problem p = spec::parse(text);
      const ModelData d = draw_model_data(p, seed);
      const BoundedReference ref = model_reference_with_bounds(p, d);
      const GpuErrorStats s = judge_against(ref, tf32_pipeline(text, d));
      std::printf("%.60s s%llu rel_l2/limit %.2f worst %.2f\n", text.c_str(), (unsigned long long)seed,
                  s.rel_l2 / s.rel_l2_limit, s.worst_ratio);
      EXPECT_EQ(s.mismatches, 0u) << "first at " << s.first_bad << ", worst ratio " << s.worst_ratio;
      EXPECT_LE(s.rel_l2, s.rel_l2_limit);
      // The bound is not vacuous: the TF32 pipeline's error is a visible share of it somewhere.
      EXPECT_GT(s.rel_l2, 0.0);
    }
  }
}

// A wrong pipeline: the epilogue of `wrong` (same main operator and data) in place of `right`'s.
struct Plant {
  std::string right, wrong, what;
};

TEST(ModelBounds, WrongStagesFail) {
  const std::string conv = "conv2d(n=2,c=4,h=8,w=8,k=8,r=3,pad=1)";
  const std::vector<Plant> plants = {
      {conv + " | group_norm(4)", conv + " | group_norm(2)", "group norm over the wrong groups"},
      {conv + " | instance_norm", conv + " | instance_norm(eps=0.1)", "norm with a wrong eps"},
      {conv + " | instance_norm", conv + " | instance_norm(eps=1e-6)",
       "(not a bug: eps 1e-6 moves sigma by 4e-5 at nn.Conv2d's scale)"},
      {conv + " | batch_norm(affine=false)", conv + " | instance_norm", "per-sample statistics for batch ones"},
      {conv + " | softmax(1)", conv + " | softmax(3)", "softmax over the wrong dim"},
      {conv + " | avg_pool2d(kernel=3,stride=1,pad=1)",
       conv + " | avg_pool2d(kernel=3,stride=1,pad=1,count_include_pad=false)", "avg pool's other divisor"},
      {conv + " | max_pool2d(2)", conv + " | avg_pool2d(2)", "average for max"},
      {conv + " | logsumexp(1)", conv + " | reduce_max(1)", "max for logsumexp"},
      {conv + " | as a | sigmoid | mul(a)", conv + " | sigmoid | as a | mul(a)", "the named value taken after the op"},
      {conv + " | layer_norm(2,affine=false)", conv + " | layer_norm(1,affine=false)", "layer norm over too few dims"},
      {conv + " | reduce_mean(2,3)", conv + " | reduce_mean(3) | reduce_mean(2)", "(not a bug: the same mean)"},
  };
  for (const Plant& plant : plants) {
    SCOPED_TRACE(plant.what);
    const spec::Problem p = spec::parse(plant.right);
    const ModelData d = draw_model_data(p, 11);
    const BoundedReference ref = model_reference_with_bounds(p, d);
    ASSERT_TRUE(passes(judge_against(ref, tf32_pipeline(plant.right, d))));
    const GpuErrorStats s = judge_against(ref, tf32_pipeline(plant.wrong, d));
    std::printf("%-45s rel_l2 %.3g limit %.3g worst %.3g mismatches %llu\n", plant.what.c_str(), s.rel_l2,
                s.rel_l2_limit, s.worst_ratio, (unsigned long long)s.mismatches);
    if (plant.what.rfind("(not a bug", 0) == 0) {
      EXPECT_TRUE(passes(s)) << "a correct reassociation rejected: worst ratio " << s.worst_ratio;
    } else {
      EXPECT_FALSE(passes(s)) << "accepted: rel_l2 " << s.rel_l2 << " limit " << s.rel_l2_limit;
    }
  }
}

TEST(ModelBounds, TheUnbiasedVarianceFails) {
  // A norm that divides by n - 1: its outputs are the right ones times sqrt((n - 1) / n), 0.3%
  // off over 16 * 16 values per (n, c); the TF32 error after a norm is about u_t = 0.05%.
  const std::string text = "conv2d(n=2,c=4,h=18,w=18,k=8,r=3) | instance_norm";
  const spec::Problem p = spec::parse(text);
  const ModelData d = draw_model_data(p, 2);
  const BoundedReference ref = model_reference_with_bounds(p, d);
  std::vector<double> out = tf32_pipeline(text, d);
  ASSERT_TRUE(passes(judge_against(ref, out)));
  const double n = 16.0 * 16.0;
  for (double& v : out) v = double(float(v * std::sqrt((n - 1.0) / n)));
  EXPECT_FALSE(passes(judge_against(ref, out)));
}

TEST(ModelBounds, AGroupWithAnUncheckedInputIsUncheckedWhole) {
  // log of a value whose interval reaches 0 is unchecked (+inf); a softmax over its channel
  // group then is too, and is counted, never a mismatch.
  const spec::Problem p = spec::parse("linear(m=4,k=8,n=6) | log | softmax(1)");
  const ModelData d = draw_model_data(p, 1);
  const BoundedReference ref = model_reference_with_bounds(p, d);
  std::size_t unchecked = 0;
  for (float b : ref.bound) unchecked += std::isinf(b) ? 1 : 0;
  EXPECT_GT(unchecked, 0u);
  EXPECT_EQ(unchecked % 6, 0u);  // whole rows of 6
}

}  // namespace
}  // namespace fusetune::reference
