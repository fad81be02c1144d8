// Which drawn tensor each input buffer of a version-2 plan binds to (worker/model_inputs.hpp),
// and the CPU reference's size limit. GPU-free.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <string>

#include "codegen/generate.hpp"
#include "common/error.hpp"
#include "gpu/device_limits.hpp"
#include "reference/model_data.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"
#include "reference/model_reference.hpp"
#include "worker/model_answer.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::worker {
namespace {

TEST(ModelInputs, EveryInputBufferOfAPlanBindsItsOwnTensor) {
  for (const char* text : {
           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | as a | add(param[k]) | add(a)",
           "matmul(batch=4,m=8,k=16,n=32,trans_a=true,trans_b=true) | add(input1) | mul(input1)",
           "conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | group_norm(2) | add(input1)",
           "linear(m=64,k=32,n=16) | layer_norm(1)",
       }) {
    const spec::Problem p = spec::parse(text);
    const reference::ModelData data = reference::draw_model_data(p, 7);
    const auto variants = codegen::generate_model_variants(p, *gpu::limits_for_arch("sm_90"));
    ASSERT_FALSE(variants.empty()) << text;
    int inputs = 0;
    for (const codegen::Buffer& b : variants.front().buffers) {
      if (b.kind == codegen::BufferKind::scratch) {
        EXPECT_THROW((void)model_buffer_floats(data, b), Error) << text;
        continue;
      }
      ++inputs;
      const std::span<const float> f = model_buffer_floats(data, b);
      EXPECT_EQ(int64_t(f.size()), b.floats()) << text << ": " << b.name;
      const float* want = nullptr;
      switch (b.kind) {
        case codegen::BufferKind::input: want = data.input.data(); break;
        case codegen::BufferKind::weights: want = data.weight.data(); break;
        case codegen::BufferKind::bias: want = data.bias.data(); break;
        case codegen::BufferKind::param: want = data.params.at(size_t(b.index)).data(); break;
        case codegen::BufferKind::extra: want = data.inputs.at(size_t(b.index)).data(); break;
        default: ADD_FAILURE() << text << ": a chain-form buffer " << b.name << " in a v2 plan";
      }
      EXPECT_EQ(f.data(), want) << text << ": " << b.name;
    }
    EXPECT_GE(inputs, 2) << text;  // at least the input and the weight
  }
}

TEST(ModelInputs, APlanAndADrawOfDifferentProblemsAreRefused) {
  const spec::Problem small = spec::parse("linear(m=64,k=32,n=16) | relu");
  const spec::Problem big = spec::parse("linear(m=64,k=32,n=17) | relu");
  const reference::ModelData data = reference::draw_model_data(small, 7);
  const auto variants = codegen::generate_model_variants(big, *gpu::limits_for_arch("sm_90"));
  bool refused = false;
  for (const codegen::Buffer& b : variants.front().buffers) {
    if (b.kind != codegen::BufferKind::weights) continue;
    try {
      (void)model_buffer_floats(data, b);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("floats") != std::string::npos;
    }
  }
  EXPECT_TRUE(refused);
}

// The old CPU-only limit (2e9 multiply-adds) is gone: KernelBench level 2's linear
// 1024 x 8192 x 8192 (6.9e10) is taken; past the GPU's 1e13, refused with both numbers.
TEST(ModelInputs, TheReferenceTakesFullSizeProblemsAndSaysWhyNotLargerOnes) {
  EXPECT_FALSE(why_no_model_reference(spec::parse("linear(m=64,k=32,n=16) | relu")));
  EXPECT_FALSE(why_no_model_reference(spec::parse("linear(m=128,k=4096,n=8192) | relu")));
  EXPECT_FALSE(why_no_model_reference(spec::parse("linear(m=1024,k=8192,n=8192) | relu")));
  // 65536 * 65536 * 4096 = 1.76e13 multiply-adds (output 2^28 values, also past the value limit:
  // the multiply-adds are said first). Its rows are checked apart (8192 rows a draw) unless a stage
  // mixes them.
  EXPECT_FALSE(why_no_model_reference(spec::parse("linear(m=65536,k=65536,n=4096) | relu")));
  EXPECT_EQ(model_sample_images(spec::parse("linear(m=65536,k=65536,n=4096) | relu")), 8192);
  const auto why = why_no_model_reference(spec::parse("linear(m=65536,k=65536,n=4096) | softmax(0)"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("1e+13"), std::string::npos) << *why;
  EXPECT_NE(why->find("1.76e+13"), std::string::npos) << *why;
}

// A GEMM with few multiply-adds per output but a huge output passes the first limit alone.
TEST(ModelInputs, TheReferenceRefusesOutputsPastItsValueLimit) {
  EXPECT_FALSE(why_no_model_reference(spec::parse("linear(m=16384,k=1,n=8192)")));  // 2^27: at the limit
  EXPECT_EQ(model_sample_images(spec::parse("linear(m=16384,k=1,n=8192)")), 0);       // whole answers
  const auto why = why_no_model_reference(spec::parse("linear(m=16384,k=1,n=16384) | softmax(0)"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("values"), std::string::npos) << *why;
  EXPECT_NE(why->find("134217728"), std::string::npos) << *why;
  EXPECT_NE(why->find("268435456"), std::string::npos) << *why;
}

// Past the limits, a conv problem whose images are independent is checked on a block of images
// per draw (KernelBench #2: 2^29 output values, 2^22 per image, so 8 images within 2^25); one
// whose stages mix images (#72's batch norm) is refused with the reason; so is one whose single
// image is past the limits.
TEST(ModelInputs, PastTheLimitsABlockOfImagesIsCheckedWhereImagesAreIndependent) {
  const spec::Problem kb2 = spec::parse(
      "conv_transpose2d(n=128,c=64,h=128,w=128,k=64,r=3,stride=2,pad=1,out_pad=1,bias=true) | add(param[k]) | "
      "clamp(0,1) | mul(2) | clamp(0,1) | div(2)");
  EXPECT_FALSE(why_no_model_reference(kb2));
  EXPECT_EQ(model_sample_images(kb2), 8);
  EXPECT_EQ(model_reference_problem(kb2).conv.n, 8);
  // within the limits: whole answers
  const spec::Problem small = spec::parse("conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | group_norm(2)");
  EXPECT_EQ(model_sample_images(small), 0);
  EXPECT_EQ(model_reference_problem(small).conv.n, 2);

  const auto kb72 = why_no_model_reference(spec::parse(
      "conv_transpose3d(n=64,c=3,d=32,h=32,w=32,k=16,r=3,stride=2,pad=1,bias=true) | batch_norm | avg_pool3d(2)"));
  ASSERT_TRUE(kb72);
  EXPECT_NE(kb72->find("float64 reference"), std::string::npos) << *kb72;
  EXPECT_NE(kb72->find("cannot be checked apart: stage 1: batch norm"), std::string::npos) << *kb72;
  // one image of 2^28 values
  const auto huge =
      why_no_model_reference(spec::parse("conv2d(n=2,c=1,h=16386,w=16386,k=1,r=3,groups=1) | relu | as a | mul(a)"));
  ASSERT_TRUE(huge);
  EXPECT_NE(huge->find("smallest block of images alone"), std::string::npos) << *huge;
}

// Draw 0 (and 2) is torch.rand-like in the input, draw 1 signed; the weights signed but on draw
// 2 (positive: the coherent sum); everything else signed in every draw; the seed decides.
TEST(ModelInputs, VerificationDrawsAlternateTheInputsSign) {
  const spec::Problem p = spec::parse("conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | group_norm(2) | add(input1)");
  const auto negatives = [](const std::vector<float>& v) {
    return std::count_if(v.begin(), v.end(), [](float x) { return x < 0; });
  };
  for (int d = 0; d < 3; ++d) {
    const reference::ModelData data = model_verification_draw(p, 11, d);
    reference::check_model_data(p, data);
    EXPECT_EQ(negatives(data.input) == 0, d % 2 == 0) << "draw " << d;
    EXPECT_EQ(negatives(data.weight) == 0, d == 2) << "draw " << d;
    EXPECT_GT(negatives(data.inputs.at(0)), 0);
    EXPECT_GT(negatives(data.bias), 0);
    for (float x : data.input) ASSERT_NE(x, 0.0f);
    EXPECT_EQ(model_verification_draw(p, 11, d).input, data.input);
  }
  EXPECT_NE(model_verification_draw(p, 11, 1).weight, model_verification_draw(p, 11, 0).weight);
}

// A linear's weight at nn.Linear's scale (1/sqrt(K)): a K = 4096 output of a model's size, so
// the fp32 rule's absolute 1e-4 means what it means in KernelBench. A matmul's B is an input:
// torch.rand-like where A is, signed where A is.
TEST(ModelInputs, WeightsAtTheModulesScaleAndAMatmulsBLikeItsA) {
  const spec::Problem lin = spec::parse("linear(m=4,k=4096,n=8) | relu");
  const reference::ModelData l = model_verification_draw(lin, 3, 1);
  const double b = 1.0 / 64.0;
  for (float v : l.weight) ASSERT_TRUE(std::fabs(v) < b && v != 0.0f) << v;
  for (float v : l.bias) ASSERT_TRUE(std::fabs(v) < b) << v;
  EXPECT_GT(*std::max_element(l.input.begin(), l.input.end()), 0.9f);  // the input keeps U(-1, 1)
  const spec::Problem mm = spec::parse("matmul(m=4,k=64,n=8) | relu");
  const auto negatives = [](const std::vector<float>& v) {
    return std::count_if(v.begin(), v.end(), [](float x) { return x < 0; });
  };
  for (int d = 0; d < 3; ++d) {
    const reference::ModelData m = model_verification_draw(mm, 3, d);
    EXPECT_EQ(negatives(m.weight) == 0, d % 2 == 0) << "draw " << d;
    EXPECT_GT(*std::max_element(m.weight.begin(), m.weight.end()), 0.5f) << "B at the input's scale";
  }
}

// The floor is held to the main operator alone, with its bias; everything else to the problem.
TEST(ModelAnswer, TheFloorsAnswerIsTheMainOperatorWithItsBias) {
  for (const char* text : {"linear(m=64,k=32,n=16) | relu", "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | "
                                                            "add(input1)",
                           "matmul(batch=2,m=8,k=16,n=4,trans_b=true) | softmax(2)"}) {
    SCOPED_TRACE(text);
    const spec::Problem p = spec::parse(text);
    const reference::ModelData data = model_verification_draw(p, 5, 1);
    const ModelAnswers a = model_answers(p, data);
    const std::vector<double> main = reference::main_output(p, data);
    const std::vector<double> whole = reference::model_reference(p, data);
    ASSERT_EQ(a.main.values.size(), main.size());
    ASSERT_EQ(a.output.values.size(), whole.size());
    ASSERT_EQ(a.main.bound.size(), main.size());
    for (size_t i = 0; i < main.size(); ++i) {
      ASSERT_NEAR(a.main.values[i], main[i], 1e-12 * (1 + std::fabs(main[i]))) << i;
      ASSERT_GT(a.main.bound[i], 0.0f) << i;  // a TF32 sum has a bound
    }
    for (size_t i = 0; i < whole.size(); ++i) ASSERT_NEAR(a.output.values[i], whole[i], 1e-9 * (1 + std::fabs(whole[i])));
    EXPECT_GT(a.var_scale, 0.2);
    EXPECT_LT(a.var_scale, 1.0);
    const spec::Problem alone = main_op_alone(p);
    EXPECT_TRUE(alone.stages.empty() && alone.pre.empty() && alone.param_shapes.empty() && alone.input_shapes.empty());
    EXPECT_EQ(spec::out_shape(alone), p.main_shape());
  }
}

}  // namespace
}  // namespace fusetune::worker
