// The float64 model reference (reference/model_reference.hpp) on tiny problems with chosen
// numbers and answers worked out by hand, one test per construct of model v2; the chain form
// against the conv2d reference (cpu_reference.hpp); the draws. PyTorch's own answers on random
// data: model_reference_torch_test.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/model_reference.hpp"
#include "reference/problem_data.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

using Values = std::vector<double>;

constexpr double kEps = 1e-5;  // the norms' default

struct Result {
  spec::Shape shape;
  Values values;
};

Result run(const std::string& text, const ModelData& d) {
  const spec::Problem p = spec::parse(text);
  return {spec::out_shape(p), model_reference(p, d)};
}

// A main operator that is the identity, so a stage test chooses the value the epilogue reads:
// a 1x1 conv with one group per channel, every weight 1, no bias. `dims` is (N, C, H, W) or
// (N, C, D, H, W).
std::string identity(const spec::Shape& dims) {
  if (dims.size() == 5) {
    return "conv3d(n=" + std::to_string(dims[0]) + ",c=" + std::to_string(dims[1]) + ",d=" + std::to_string(dims[2]) +
           ",h=" + std::to_string(dims[3]) + ",w=" + std::to_string(dims[4]) + ",k=" + std::to_string(dims[1]) +
           ",r=1,groups=" + std::to_string(dims[1]) + ",bias=false) ";
  }
  return "conv2d(n=" + std::to_string(dims[0]) + ",c=" + std::to_string(dims[1]) + ",h=" + std::to_string(dims[2]) +
         ",w=" + std::to_string(dims[3]) + ",k=" + std::to_string(dims[1]) + ",r=1,groups=" +
         std::to_string(dims[1]) + ",bias=false) ";
}
ModelData identity_data(const spec::Shape& dims, std::vector<float> values) {
  ModelData d;
  d.input = std::move(values);
  d.weight.assign(size_t(dims[1]), 1.0f);
  return d;
}
Result on_values(const spec::Shape& dims, std::vector<float> values, const std::string& epilogue,
              std::vector<std::vector<float>> params = {}, std::vector<std::vector<float>> inputs = {}) {
  ModelData d = identity_data(dims, std::move(values));
  d.params = std::move(params);
  d.inputs = std::move(inputs);
  return run(identity(dims) + epilogue, d);
}

void expect_near(const Values& got, const Values& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-13 * std::max(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

// --- main operators -----------------------------------------------------------------------

TEST(ModelReferenceMain, Conv3dReadsDepthTaps) {
  // x = 1..8 as (1,1,2,2,2); only the taps (0,0,0) and (1,1,1) are non-zero: 1*1 + 2*8 + bias.
  ModelData d;
  d.input = {1, 2, 3, 4, 5, 6, 7, 8};
  d.weight = {1, 0, 0, 0, 0, 0, 0, 2};
  d.bias = {0.5f};
  const Result r = run("conv3d(n=1,c=1,d=2,h=2,w=2,k=1,r=2)", d);
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 1, 1, 1}));
  EXPECT_EQ(r.values, (Values{17.5}));
}

TEST(ModelReferenceMain, ConvTranspose2dStridePadOutPadGroups) {
  // Group 0 (channel 0 -> output 0): a centre tap puts x[i][j] at (2i, 2j). Group 1 (channel 1 ->
  // output 1): the tap (r=2, s=0) puts x[i][j] at (2i - 1 + 2, 2j - 1), so column j = 0 falls off
  // the left edge. Output (4, 4): (2 - 1) * 2 - 2 + 3 + out_pad 1; row and column 3 exist only
  // through out_pad.
  ModelData d;
  d.input = {1, 2, 3, 4, 10, 20, 30, 40};
  d.weight.assign(18, 0.0f);
  d.weight[4] = 1.0f;      // channel 0, (r=1, s=1)
  d.weight[9 + 6] = 1.0f;  // channel 1, (r=2, s=0)
  const Result r = run("conv_transpose2d(n=1,c=2,h=2,w=2,k=2,r=3,stride=2,pad=1,out_pad=1,groups=2,bias=false)", d);
  EXPECT_EQ(r.shape, (spec::Shape{1, 2, 4, 4}));
  EXPECT_EQ(r.values, (Values{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0,  //
                              0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0}));
}

TEST(ModelReferenceMain, ConvTranspose3dScattersEveryTap) {
  // x = [1, 2] along W, w = 1..8 as (T, R, S) = (2, 2, 2): out[t][r][q] = sum_j x[j] w[t][r][q - j].
  ModelData d;
  d.input = {1, 2};
  d.weight = {1, 2, 3, 4, 5, 6, 7, 8};
  const Result r = run("conv_transpose3d(n=1,c=1,d=1,h=1,w=2,k=1,r=2,bias=false)", d);
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 2, 2, 3}));
  EXPECT_EQ(r.values, (Values{1, 4, 4, 3, 10, 8, 5, 16, 12, 7, 22, 16}));
}

TEST(ModelReferenceMain, LinearIsXTimesWTransposedPlusBias) {
  ModelData d;
  d.input = {1, 2, 3, 4, 5, 6};        // x (2, 3)
  d.weight = {1, 0, -1, .5, .5, .5};   // W (N=2, K=3)
  d.bias = {10, 20};
  const Result r = run("linear(m=2,k=3,n=2)", d);
  EXPECT_EQ(r.shape, (spec::Shape{2, 2}));
  EXPECT_EQ(r.values, (Values{8, 23, 8, 27.5}));
}

TEST(ModelReferenceMain, MatmulBatchWithBothOperandsTransposed) {
  // A stored (batch, K, M), B stored (batch, N, K). Batch 0: [[1,3],[2,4]] x [1,10]^T; batch 1:
  // [[0,1],[1,0]] x [2,3]^T.
  ModelData d;
  d.input = {1, 2, 3, 4, 0, 1, 1, 0};
  d.weight = {1, 10, 2, 3};
  const Result r = run("matmul(batch=2,m=2,k=2,n=1,trans_a=true,trans_b=true)", d);
  EXPECT_EQ(r.shape, (spec::Shape{2, 2, 1}));
  EXPECT_EQ(r.values, (Values{31, 42, 3, 2}));
  // Without the flags the same buffers are A (M, K) and B (K, N).
  d.weight = {1, 0, 0, 1, 2, 3, 4, 5};
  const Result plain = run("matmul(batch=2,m=2,k=2,n=2)", d);
  EXPECT_EQ(plain.values, (Values{1, 2, 3, 4, 4, 5, 2, 3}));
}

// --- reductions, logsumexp, softmax -------------------------------------------------------

const spec::Shape kCube{1, 2, 2, 2};
const std::vector<float> kCubeValues{1, 2, 3, 4, 5, 6, 7, -8};

TEST(ModelReferenceStages, ReductionsWithAndWithoutKeepdim) {
  Result r = on_values(kCube, kCubeValues, "| reduce_sum(spatial)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2, 1, 1}));
  EXPECT_EQ(r.values, (Values{10, 10}));
  r = on_values(kCube, kCubeValues, "| reduce_sum(spatial,keepdim=false)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2}));
  EXPECT_EQ(r.values, (Values{10, 10}));
  r = on_values(kCube, kCubeValues, "| reduce_max(channel,keepdim=false)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2, 2}));
  EXPECT_EQ(r.values, (Values{5, 6, 7, 4}));
  r = on_values(kCube, kCubeValues, "| reduce_max(channel)");  // the chain form's reduction
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 2, 2}));
  EXPECT_EQ(r.values, (Values{5, 6, 7, 4}));
  r = on_values(kCube, kCubeValues, "| reduce_min(all,keepdim=false)");
  EXPECT_EQ(r.shape, spec::Shape{});
  EXPECT_EQ(r.values, (Values{-8}));
  r = on_values(kCube, kCubeValues, "| reduce_mean(2)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2, 1, 2}));
  EXPECT_EQ(r.values, (Values{2, 3, 6, -1}));
  r = on_values(kCube, kCubeValues, "| reduce_mean(1,3,keepdim=false)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2}));
  EXPECT_EQ(r.values, (Values{3.5, 1.5}));
}

TEST(ModelReferenceStages, LogsumexpIsShiftedByTheMax) {
  // exp(1000) overflows: only the shifted form gives 1000 + ln 2.
  Result r = on_values({1, 2, 1, 1}, {1000, 1000}, "| logsumexp(channel)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 1, 1}));
  expect_near(r.values, {1000 + std::log(2.0)});
  r = on_values(kCube, kCubeValues, "| logsumexp(spatial,keepdim=false)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 2}));
  expect_near(r.values, {std::log(std::exp(1) + std::exp(2) + std::exp(3) + std::exp(4)),
                         std::log(std::exp(5) + std::exp(6) + std::exp(7) + std::exp(-8))});
  // All -inf: the shift is 0 (PyTorch's rule), so the answer is -inf, not NaN.
  const float inf = std::numeric_limits<float>::infinity();
  r = on_values({1, 2, 1, 1}, {-inf, -inf}, "| logsumexp(channel)");
  EXPECT_EQ(r.values, (Values{-std::numeric_limits<double>::infinity()}));
}

TEST(ModelReferenceStages, SoftmaxAndLogSoftmaxOverOneDim) {
  Result r = on_values({1, 4, 1, 1}, {1000, 1000, 1000, -1000}, "| softmax(channel)");
  expect_near(r.values, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0.0});
  r = on_values({1, 4, 1, 1}, {1000, 1000, 1000, -1000}, "| log_softmax(1)");
  expect_near(r.values, {-std::log(3.0), -std::log(3.0), -std::log(3.0), -2000 - std::log(3.0)});
  // over the last dim (-1): rows of kCube's planes
  r = on_values(kCube, kCubeValues, "| softmax(-1)");
  const double e = std::exp(1.0);
  expect_near(r.values, {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e),
                         1 / (1 + std::exp(-15.0)), std::exp(-15.0) / (1 + std::exp(-15.0))});
}

// --- pooling ------------------------------------------------------------------------------

TEST(ModelReferenceStages, MaxPoolPadsWithMinusInfinity) {
  // 1-D over the last dim: windows {x0}, {x1, x2}, {x3}; zero padding would give 0 for the last.
  Result r = on_values({1, 1, 1, 4}, {1, -2, 3, -4}, "| max_pool1d(kernel=2,stride=2,pad=1)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 1, 3}));
  EXPECT_EQ(r.values, (Values{1, 3, -4}));
  // 2-D on -1..-9: every window holds real values and padding; the max is never 0.
  r = on_values({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9}, "| max_pool2d(kernel=2,stride=2,pad=1)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 2, 2}));
  EXPECT_EQ(r.values, (Values{-1, -2, -4, -5}));
  // 3-D: a 3^3 window with pad 1 around a 2^3 value covers all of it from every output.
  r = on_values({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}, "| max_pool3d(kernel=3,stride=1,pad=1)");
  EXPECT_EQ(r.shape, (spec::Shape{1, 1, 2, 2, 2}));
  EXPECT_EQ(r.values, Values(8, 8.0));
}

TEST(ModelReferenceStages, AvgPoolCountsPaddingOnlyWhenAsked) {
  Result r = on_values({1, 1, 1, 4}, {1, -2, 3, -4}, "| avg_pool1d(kernel=2,stride=2,pad=1)");
  EXPECT_EQ(r.values, (Values{0.5, 0.5, -2}));
  r = on_values({1, 1, 1, 4}, {1, -2, 3, -4}, "| avg_pool1d(kernel=2,stride=2,pad=1,count_include_pad=false)");
  EXPECT_EQ(r.values, (Values{1, 0.5, -4}));
  const std::vector<float> nine{1, 2, 3, 4, 5, 6, 7, 8, 9};
  r = on_values({1, 1, 3, 3}, nine, "| avg_pool2d(kernel=2,stride=2,pad=1)");
  EXPECT_EQ(r.values, (Values{0.25, 1.25, 2.75, 7}));
  r = on_values({1, 1, 3, 3}, nine, "| avg_pool2d(kernel=2,stride=2,pad=1,count_include_pad=false)");
  EXPECT_EQ(r.values, (Values{1, 2.5, 5.5, 7}));
  // 3-D, stride 1: every 3^3 window holds all 8 values (sum 36) and 19 padded places.
  const std::vector<float> eight{1, 2, 3, 4, 5, 6, 7, 8};
  r = on_values({1, 1, 2, 2, 2}, eight, "| avg_pool3d(kernel=3,stride=1,pad=1)");
  expect_near(r.values, Values(8, 36.0 / 27));
  r = on_values({1, 1, 2, 2, 2}, eight, "| avg_pool3d(kernel=3,stride=1,pad=1,count_include_pad=false)");
  expect_near(r.values, Values(8, 4.5));
  r = on_values({1, 1, 2, 2, 2}, eight, "| avg_pool3d(2)");
  EXPECT_EQ(r.values, (Values{4.5}));
}

// --- normalizations -----------------------------------------------------------------------

// (x - mean) / sqrt(var + eps) for a group with mean 2 and biased variance 1 ([1, 3]), and one
// with mean 20 and variance 100 ([10, 30]).
double z(double dev, double var, double eps = kEps) { return dev / std::sqrt(var + eps); }

TEST(ModelReferenceStages, BatchNormUsesBatchStatisticsAndBiasedVariance) {
  // (N=2, C=2): channel 0 is [1, 3] over the batch, channel 1 [10, 30]. Eval mode or the unbiased
  // variance (2, 200) would give other numbers.
  const spec::Shape dims{2, 2, 1, 1};
  Result r = on_values(dims, {1, 10, 3, 30}, "| batch_norm(affine=false)");
  expect_near(r.values, {z(-1, 1), z(-10, 100), z(1, 1), z(10, 100)});
  // affine: weight per channel multiplies, bias adds
  r = on_values(dims, {1, 10, 3, 30}, "| batch_norm", {{2, 3}, {0.5, -1}});
  expect_near(r.values, {2 * z(-1, 1) + 0.5, 3 * z(-10, 100) - 1, 2 * z(1, 1) + 0.5, 3 * z(10, 100) - 1});
}

TEST(ModelReferenceStages, GroupNormPerImageAndGroup) {
  const spec::Shape dims{1, 4, 1, 1};
  Result r = on_values(dims, {1, 3, 10, 30}, "| group_norm(2)", {{1, 2, 3, 4}, {0, 0, 0, 1}});
  expect_near(r.values, {z(-1, 1), 2 * z(1, 1), 3 * z(-10, 100), 4 * z(10, 100) + 1});
  r = on_values(dims, {1, 3, 10, 30}, "| group_norm(2,eps=0.5,affine=false)");
  expect_near(r.values, {z(-1, 1, 0.5), z(1, 1, 0.5), z(-10, 100, 0.5), z(10, 100, 0.5)});
}

TEST(ModelReferenceStages, InstanceNormPerImageAndChannel) {
  const spec::Shape dims{1, 2, 1, 2};
  Result r = on_values(dims, {1, 3, 10, 30}, "| instance_norm");  // PyTorch's default: no affine
  expect_near(r.values, {z(-1, 1), z(1, 1), z(-10, 100), z(10, 100)});
  r = on_values(dims, {1, 3, 10, 30}, "| instance_norm(affine=true)", {{2, 3}, {1, 0}});
  expect_near(r.values, {2 * z(-1, 1) + 1, 2 * z(1, 1) + 1, 3 * z(-10, 100), 3 * z(10, 100)});
}

TEST(ModelReferenceStages, LayerNormOverTheLastDims) {
  // over W: rows [1, 3] and [10, 30]; eps inside the square root
  const spec::Shape dims{1, 2, 1, 2};
  Result r = on_values(dims, {1, 3, 10, 30}, "| layer_norm(1,eps=0.5,affine=false)");
  expect_near(r.values, {z(-1, 1, 0.5), z(1, 1, 0.5), z(-10, 100, 0.5), z(10, 100, 0.5)});
  // over (C, H, W): one group [1, 3, 10, 30], mean 11, variance (100 + 64 + 1 + 361) / 4; the
  // affine weight has the normalized dims' shape, one value per element
  r = on_values(dims, {1, 3, 10, 30}, "| layer_norm(3)", {{1, 2, 3, 4}, {0, 0, 0, 0.5}});
  const double var = 526.0 / 4;
  expect_near(r.values, {z(-10, var), 2 * z(-8, var), 3 * z(-1, var), 4 * z(19, var) + 0.5});
}

// --- named values, extra inputs, parameters -----------------------------------------------

TEST(ModelReferenceStages, NamedValueUsedTwiceIsSwish) {
  // x * sigmoid(x), with x named before the sigmoid
  const Result r = on_values({1, 1, 1, 3}, {0, 2, -1}, "| as a | sigmoid | mul(a)");
  expect_near(r.values, {0, 2 / (1 + std::exp(-2.0)), -1 / (1 + std::exp(1.0))});
  // (x + x) * x + x = 2x^2 + x: the same value read three times
  const Result t = on_values({1, 1, 1, 3}, {0, 2, -1}, "| as a | add(a) | mul(a) | add(a)");
  EXPECT_EQ(t.values, (Values{0, 10, 1}));
}

TEST(ModelReferenceStages, ExtraInputAndOperandOrder) {
  // (x + input1) * input1, then input1 / that (div(input1, x) is rdiv)
  const Result r = on_values({1, 1, 1, 3}, {1, 2, 3}, "| add(input1) | mul(input1) | div(input1, x)", {},
                          {{2, -1, 0.5}});
  expect_near(r.values, {2.0 / 6, -1.0 / -1, 0.5 / 1.75});
}

TEST(ModelReferenceStages, ReducedValueBroadcastsAgainstANamedValue) {
  // rows [1, 2, 3] and [4, 5, 6]: row sum - x broadcasts (2, 1) against (2, 3)
  ModelData d;
  d.input = {1, 0, 0, 1};  // A = identity, so the matmul's output is B
  d.weight = {1, 2, 3, 4, 5, 6};
  const Result r = run("matmul(m=2,k=2,n=3) | as y | reduce_sum(1) | sub(y)", d);
  EXPECT_EQ(r.shape, (spec::Shape{2, 3}));
  EXPECT_EQ(r.values, (Values{5, 4, 3, 11, 10, 9}));
}

TEST(ModelReferenceStages, LearnedScalarAndPerChannelParameters) {
  // param[1] is one value for the whole tensor; param[k] one per channel
  const Result r = on_values({1, 2, 1, 2}, {1, 2, 3, 4}, "| add(param[1]) | mul(param[k])", {{0.5}, {10, -1}});
  EXPECT_EQ(r.values, (Values{15, 25, -3.5, -4.5}));
}

TEST(ModelReferenceStages, ScalarsApplyAsFp32Numbers) {
  // op_math's rule: mul(0.1) multiplies by float(0.1), as PyTorch does to an fp32 tensor
  const Result r = on_values({1, 1, 1, 1}, {1}, "| mul(0.1)");
  EXPECT_EQ(r.values, (Values{double(0.1f)}));
}

// --- the chain form -----------------------------------------------------------------------

// ModelData of a conv2d chain problem as the conv2d reference's ProblemData: chan is the bias,
// then each parameter's K values.
ProblemData as_problem_data(const ModelData& d) {
  ProblemData pd{d.input, d.weight, d.bias};
  for (const std::vector<float>& p : d.params) pd.chan.insert(pd.chan.end(), p.begin(), p.end());
  return pd;
}

TEST(ModelReferenceChain, Conv2dChainEqualsTheConv2dReference) {
  for (const char* text : {
           "conv2d(n=2,c=3,h=6,w=5,k=4,r=3,pad=1) | add(param[k]) | relu | reduce_sum | mul(0.5)",
           "conv2d(n=1,c=2,h=7,w=7,k=5,r=3,stride=2,dilation=2,bias=false) | mul(param[k]) | gelu | sub(param[k])",
           "conv2d(n=2,c=4,h=5,w=5,k=3,r=2) | tanh | reduce_max(channel) | mul(2)",
           "conv2d(n=1,c=3,h=5,w=6,k=6,r=3,s=1,pad=1) | min(param[k]) | reduce_mean | sigmoid",
           "conv2d(n=1,c=3,h=4,w=4,k=2,r=1) | softplus | reduce_min | abs",
       }) {
    SCOPED_TRACE(text);
    const spec::Problem p = spec::parse(text);
    ASSERT_TRUE(p.is_conv2d_chain());
    const ModelData d = draw_model_data(p, 7);
    const Values want = reference_output(p, as_problem_data(d));
    const Values got = model_reference(p, d);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12 * std::fabs(want[i])) << i;
  }
}

TEST(ModelReferenceChain, LinearChainUsesDimOneAsTheChannel) {
  // linear (M=2, N=2) -> add(param[k]) per output feature -> max over features (keepdim)
  ModelData d;
  d.input = {1, 2, 3, 4};
  d.weight = {1, 0, 0, 1};  // W = I
  d.bias = {0, 0};
  d.params = {{10, -10}};
  const Result r = run("linear(m=2,k=2,n=2) | add(param[k]) | reduce_max(channel)", d);
  EXPECT_EQ(r.shape, (spec::Shape{2, 1}));
  EXPECT_EQ(r.values, (Values{11, 13}));
}

// --- data ---------------------------------------------------------------------------------

TEST(ModelReferenceData, DrawsEveryBufferSignedAndSized) {
  const spec::Problem p = spec::parse(
      "conv_transpose3d(n=1,c=4,d=2,h=3,w=3,k=6,r=2,groups=2) | batch_norm | add(param[1]) | add(input1)");
  const ModelData d = draw_model_data(p, 3);
  EXPECT_NO_THROW(check_model_data(p, d));
  EXPECT_EQ(d.weight.size(), size_t(4 * 3 * 8));  // (C, K/g, T, R, S)
  EXPECT_EQ(d.params.size(), 3U);                  // the norm's weight and bias, then param[1]
  EXPECT_EQ(d.params[2].size(), 1U);
  bool negative = false, positive = false;
  for (const std::vector<float>* buf : {&d.input, &d.weight, &d.bias, &d.params[0], &d.inputs[0]}) {
    for (float v : *buf) {
      EXPECT_TRUE(v > -1.0f && v < 1.0f && v != 0.0f) << v;
      negative |= v < 0.0f;
      positive |= v > 0.0f;
    }
  }
  EXPECT_TRUE(negative && positive);
  // The weight and bias at nn.ConvTranspose3d's initial scale: U(-b, b), b = 1/sqrt(K/g T R S).
  EXPECT_EQ(weight_fan_in(p), 3 * 2 * 2 * 2);
  const double b = 1.0 / std::sqrt(24.0);
  for (const std::vector<float>* buf : {&d.weight, &d.bias}) {
    const auto [lo, hi] = std::minmax_element(buf->begin(), buf->end());
    EXPECT_GE(*lo, -b);
    EXPECT_LE(*hi, b);
    EXPECT_GT(*hi - *lo, b / 2) << "spread over the range";
  }
  EXPECT_EQ(draw_model_data(p, 3).input, d.input);  // the seed decides
  EXPECT_NE(draw_model_data(p, 4).input, d.input);
}

TEST(ModelReferenceData, WrongSizesAreRefusedByName) {
  const spec::Problem p = spec::parse("linear(m=2,k=3,n=4) | add(input1)");
  ModelData d = draw_model_data(p, 1);
  d.inputs[0].pop_back();
  EXPECT_THROW((void)model_reference(p, d), InputError);
  d = draw_model_data(p, 1);
  d.bias.clear();
  try {
    (void)main_output(p, d);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bias"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusetune::reference
