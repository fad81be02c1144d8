// Rendering of epilogue ops to CUDA (GPU-free).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "codegen/op_render.hpp"
#include "codegen_problems.hpp"
#include "common/error.hpp"

namespace fusetune::codegen {
namespace {

using spec::OpKind;
using testing::op;
using testing::param;
using testing::scalar;

// The float a rendered literal denotes ("0.100000001f" -> 0.1f, "(-3.0f)" -> -3).
float parse_literal(std::string s) {
  if (s.front() == '(') s = s.substr(1, s.size() - 2);
  EXPECT_EQ(s.back(), 'f') << s;
  s.pop_back();
  return std::strtof(s.c_str(), nullptr);
}

TEST(Fp32Literal, IsAValidFloatLiteral) {
  EXPECT_EQ(fp32_literal(0.5), "0.5f");
  EXPECT_EQ(fp32_literal(2.0), "2.0f");
  EXPECT_EQ(fp32_literal(-3.0), "(-3.0f)");
  EXPECT_EQ(fp32_literal(0.1), "0.100000001f");  // float(0.1), not 0.1
  EXPECT_EQ(fp32_literal(1e-5), "9.99999975e-06f");
  EXPECT_EQ(fp32_literal(1e30), "1.00000002e+30f");
  EXPECT_EQ(fp32_literal(std::numeric_limits<double>::infinity()), "FT_INF");
  EXPECT_EQ(fp32_literal(-std::numeric_limits<double>::infinity()), "(-FT_INF)");
  EXPECT_EQ(fp32_literal(std::nan("")), "FT_NAN");
  EXPECT_EQ(fp32_literal(1e300), "FT_INF");  // overflows fp32, as PyTorch's conversion does
}

TEST(Fp32Literal, RoundTripsToTheSameFloat) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  for (int i = 0; i < 20000; ++i) {
    const double v = std::ldexp(mantissa(rng), exponent(rng));
    const float expect = static_cast<float>(v);
    EXPECT_EQ(parse_literal(fp32_literal(v)), expect) << v << " -> " << fp32_literal(v);
  }
  EXPECT_EQ(parse_literal(fp32_literal(1.4e-45)), 1.4e-45f);  // the smallest denormal
}

TEST(Operand, PerChannelOffsetsFollowTheChanLayout) {
  const ChanLayout with_bias{128, true};
  const ChanLayout without_bias{128, false};
  EXPECT_EQ(render_operand(param(0), with_bias), "chan[128 + k]");
  EXPECT_EQ(render_operand(param(1), with_bias), "chan[256 + k]");
  EXPECT_EQ(render_operand(param(0), without_bias), "chan[k]");
  EXPECT_EQ(render_operand(param(2), without_bias), "chan[256 + k]");
  EXPECT_EQ(render_operand(scalar(2.0), with_bias), "2.0f");
}

// A scalar divisor becomes a product only when its reciprocal is a normal fp32 number.
TEST(RenderOp, DivisionByAScalarIsAProductWhereExactEnough) {
  const ChanLayout chan{8, true};
  EXPECT_EQ(render_op_expr(op(OpKind::div, {scalar(3.0)}), "v", chan), "v * 0.333333343f");
  EXPECT_EQ(render_op_expr(op(OpKind::div, {scalar(0.5)}), "v", chan), "v * 2.0f");
  EXPECT_EQ(render_op_expr(op(OpKind::div, {scalar(0.0)}), "v", chan), "v / 0.0f");
  EXPECT_EQ(render_op_expr(op(OpKind::div, {scalar(1e-39)}), "v", chan), "v / 1.00000022e-39f");  // 1/c overflows
  EXPECT_EQ(render_op_expr(op(OpKind::div, {param(0)}), "v", chan), "v / chan[8 + k]");
}

// One op of each kind with the operands it takes, and a piece its rendering must contain.
struct Case {
  spec::Op op;
  std::string expect;
};

// Rendered with ChanLayout{8, true}: param 0 at chan[8 + k], param 1 at chan[16 + k].
std::vector<Case> every_kind() {
  return {
      {op(OpKind::add, {scalar(1.0)}), "v + 1.0f"},
      {op(OpKind::sub, {param(0)}), "v - chan[8 + k]"},
      {op(OpKind::rsub, {scalar(1.0)}), "1.0f - v"},
      {op(OpKind::mul, {scalar(2.0)}), "v * 2.0f"},
      {op(OpKind::div, {scalar(3.0)}), "v * 0.333333343f"},  // scalar division as a product with fp32(1/3)
      {op(OpKind::rdiv, {param(1)}), "chan[16 + k] / v"},
      {op(OpKind::min, {scalar(0.5)}), "ft_min(v, 0.5f)"},
      {op(OpKind::max, {scalar(-0.5)}), "ft_max(v, (-0.5f))"},
      {op(OpKind::clamp, {scalar(-1.0), scalar(1.0)}), "ft_clamp(v, (-1.0f), 1.0f)"},
      {op(OpKind::relu), "ft_relu(v)"},
      {op(OpKind::leaky_relu, {scalar(0.2)}), "ft_leaky_relu(v, 0.200000003f)"},
      {op(OpKind::gelu), "ft_gelu(v)"},
      {op(OpKind::gelu_tanh), "ft_gelu_tanh(v)"},
      {op(OpKind::tanh), "ft_tanh(v)"},
      {op(OpKind::sigmoid), "ft_sigmoid(v)"},
      {op(OpKind::silu), "ft_silu(v)"},
      {op(OpKind::mish), "ft_mish(v)"},
      {op(OpKind::hardswish), "ft_hardswish(v)"},
      {op(OpKind::hardsigmoid), "ft_hardsigmoid(v)"},
      {op(OpKind::hardtanh, {scalar(-2.0), scalar(2.0)}), "ft_clamp(v, (-2.0f), 2.0f)"},
      {op(OpKind::softplus, {scalar(2.0), scalar(10.0)}), "ft_softplus(v, 2.0f, 10.0f)"},
      {op(OpKind::exp), "ft_exp(v)"},
      {op(OpKind::log), "ft_log(v)"},
      {op(OpKind::abs), "fabsf(v)"},
      {op(OpKind::neg), "-v"},
      {op(OpKind::square), "v * v"},
      {op(OpKind::sqrt), "sqrtf(v)"},
  };
}

TEST(RenderOp, EveryKindRenders) {
  const ChanLayout chan{8, true};
  const auto cases = every_kind();
  EXPECT_EQ(cases.size(), size_t(OpKind::sqrt) + 1);  // one case per OpKind
  for (const auto& c : cases) EXPECT_EQ(render_op_expr(c.op, "v", chan), c.expect) << op_text(c.op);
}

TEST(RenderOp, OptionalOperandsTakePyTorchDefaults) {
  const ChanLayout chan{8, false};
  EXPECT_EQ(render_op_expr(op(OpKind::leaky_relu), "v", chan), "ft_leaky_relu(v, 0.00999999978f)");
  EXPECT_EQ(render_op_expr(op(OpKind::hardtanh), "v", chan), "ft_clamp(v, (-1.0f), 1.0f)");
  EXPECT_EQ(render_op_expr(op(OpKind::softplus), "v", chan), "ft_softplus(v, 1.0f, 20.0f)");
  EXPECT_THROW((void)render_op_expr(op(OpKind::add), "v", chan), InputError);
  EXPECT_THROW((void)render_op_expr(op(OpKind::clamp, {scalar(0.0)}), "v", chan), InputError);
}

TEST(OpText, ShortestNumbers) {
  EXPECT_EQ(op_text(op(OpKind::mul, {scalar(0.1)})), "mul(0.1)");
  EXPECT_EQ(op_text(op(OpKind::clamp, {scalar(-1.0), param(2)})), "clamp(-1, param[2])");
  EXPECT_EQ(op_text(op(OpKind::relu)), "relu");
}

TEST(RenderChain, OneAssignmentPerOpWithItsText) {
  const ChanLayout chan{128, true};
  const std::string fn = render_chain_function(
      "ft_chain", {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})}, chan);
  EXPECT_EQ(fn,
            "__device__ __forceinline__ float ft_chain(float v, int k, const float* __restrict__ chan) {\n"
            "  v = ft_min(v, 0.5f);  // min(0.5)\n"
            "  v = v + chan[128 + k];  // add(param[0])\n"
            "  v = v * 2.0f;  // mul(2)\n"
            "  return v;\n"
            "}\n");
  EXPECT_EQ(render_chain_function("ft_chain_post", {}, chan),
            "__device__ __forceinline__ float ft_chain_post(float v, int k, const float* __restrict__ chan) {\n"
            "  return v;\n"
            "}\n");
}

TEST(RenderReduce, EachKind) {
  const auto mn = render_reduce(spec::ReduceKind::min, 128);
  EXPECT_EQ(mn.init, "FT_INF");
  EXPECT_EQ(mn.step, "ft_min(acc, v)");
  const auto mx = render_reduce(spec::ReduceKind::max, 128);
  EXPECT_EQ(mx.init, "(-FT_INF)");
  EXPECT_EQ(mx.step, "ft_max(acc, v)");
  const auto sum = render_reduce(spec::ReduceKind::sum, 128);
  EXPECT_EQ(sum.init, "0.0f");
  EXPECT_EQ(sum.step, "acc + v");
  EXPECT_EQ(sum.finish, "acc");
  const auto mean = render_reduce(spec::ReduceKind::mean, 128);
  EXPECT_EQ(mean.finish, "acc / 128.0f");
  const std::string fns = render_reduce_functions(spec::ReduceKind::mean, 3);
  EXPECT_NE(fns.find("float ft_reduce_init() { return 0.0f; }"), std::string::npos);
  EXPECT_NE(fns.find("float ft_reduce_step(float acc, float v) { return acc + v; }"), std::string::npos);
  EXPECT_NE(fns.find("float ft_reduce_finish(float acc) { return acc / 3.0f; }"), std::string::npos);
}

}  // namespace
}  // namespace fusetune::codegen
