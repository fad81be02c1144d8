// The float64 op semantics, checked at points whose values were computed independently
// (Python's math module, double precision; fp32 roundings via struct.pack('f')).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "reference/op_math.hpp"
#include "spec/ops.hpp"
#include "spec_builders.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using spec_builders::param;
using spec_builders::scalar;

double ap(OpKind kind, double x, std::vector<spec::Operand> args = {}, const double* chan = nullptr) {
  return apply_op(spec::Op{kind, std::move(args)}, x, chan);
}

TEST(OpMath, ArithmeticBothOperandOrders) {
  EXPECT_EQ(ap(OpKind::add, 1.0, {scalar(2.0)}), 3.0);
  EXPECT_EQ(ap(OpKind::sub, 1.0, {scalar(0.25)}), 0.75);
  EXPECT_EQ(ap(OpKind::rsub, 0.5, {scalar(2.0)}), 1.5);
  EXPECT_EQ(ap(OpKind::mul, 3.0, {scalar(2.0)}), 6.0);
  EXPECT_EQ(ap(OpKind::div, 1.0, {scalar(4.0)}), 0.25);
  EXPECT_EQ(ap(OpKind::rdiv, 4.0, {scalar(1.0)}), 0.25);
  EXPECT_EQ(ap(OpKind::neg, 2.5), -2.5);
  EXPECT_EQ(ap(OpKind::square, -3.0), 9.0);
  EXPECT_EQ(ap(OpKind::abs, -3.5), 3.5);
}

TEST(OpMath, ScalarsAreRoundedToFp32) {
  // float(0.1) = 0.100000001490116119384765625
  EXPECT_EQ(operand_value(scalar(0.1), nullptr), 0.10000000149011612);
  EXPECT_EQ(ap(OpKind::mul, 3.0, {scalar(0.1)}), 0.30000000447034836);
  EXPECT_EQ(ap(OpKind::add, 1.0, {scalar(0.1)}), 1.1000000014901161);
  EXPECT_EQ(ap(OpKind::min, 5.0, {scalar(2.2)}), 2.200000047683716);
  EXPECT_EQ(ap(OpKind::leaky_relu, -3.0, {scalar(0.01)}), -0.029999999329447746);
  EXPECT_EQ(ap(OpKind::mul, 1.0, {scalar(0.5)}), 0.5);  // exact in fp32: unchanged
}

TEST(OpMath, PerChannelOperandsReadTheirChannel) {
  const double chan[] = {3.0, -2.0};  // param 0, param 1 at this channel; not rounded again
  EXPECT_EQ(ap(OpKind::add, 1.0, {param(1)}, chan), -1.0);
  EXPECT_EQ(ap(OpKind::mul, 0.5, {param(0)}, chan), 1.5);
  EXPECT_EQ(ap(OpKind::clamp, 5.0, {param(1), param(0)}, chan), 3.0);
  EXPECT_THROW((void)ap(OpKind::add, 1.0, {param(0)}, nullptr), InputError);
}

TEST(OpMath, MinMaxClampPropagateNaN) {
  EXPECT_EQ(ap(OpKind::min, 0.7, {scalar(0.5)}), 0.5);
  EXPECT_EQ(ap(OpKind::min, 0.3, {scalar(0.5)}), 0.3);
  EXPECT_EQ(ap(OpKind::max, 0.3, {scalar(0.5)}), 0.5);
  EXPECT_TRUE(std::isnan(ap(OpKind::min, kNaN, {scalar(0.5)})));
  EXPECT_TRUE(std::isnan(ap(OpKind::min, 0.3, {scalar(kNaN)})));
  EXPECT_TRUE(std::isnan(ap(OpKind::max, kNaN, {scalar(0.5)})));
  EXPECT_EQ(ap(OpKind::clamp, 0.7, {scalar(-0.5), scalar(0.5)}), 0.5);
  EXPECT_EQ(ap(OpKind::clamp, -0.7, {scalar(-0.5), scalar(0.5)}), -0.5);
  EXPECT_EQ(ap(OpKind::clamp, 0.5, {scalar(1.0), scalar(0.0)}), 0.0);  // lo > hi: hi, like torch
  EXPECT_TRUE(std::isnan(ap(OpKind::clamp, kNaN, {scalar(-1.0), scalar(1.0)})));
  EXPECT_EQ(ap(OpKind::hardtanh, 3.0), 1.0);  // default -1..1
  EXPECT_EQ(ap(OpKind::hardtanh, 0.25, {scalar(-2.0), scalar(0.5)}), 0.25);
  EXPECT_EQ(ap(OpKind::hardtanh, -3.0, {scalar(-2.0), scalar(0.5)}), -2.0);
}

TEST(OpMath, ReluFamily) {
  EXPECT_EQ(ap(OpKind::relu, -2.0), 0.0);
  EXPECT_EQ(ap(OpKind::relu, 2.0), 2.0);
  EXPECT_TRUE(std::isnan(ap(OpKind::relu, kNaN)));
  EXPECT_EQ(ap(OpKind::leaky_relu, 2.0, {scalar(0.5)}), 2.0);
  EXPECT_EQ(ap(OpKind::leaky_relu, -2.0, {scalar(0.5)}), -1.0);
  EXPECT_EQ(ap(OpKind::leaky_relu, -2.0), -0.019999999552965164);  // default slope 0.01 in fp32
}

TEST(OpMath, SmoothActivations) {
  EXPECT_DOUBLE_EQ(ap(OpKind::gelu, 1.0), 0.8413447460685429);
  EXPECT_DOUBLE_EQ(ap(OpKind::gelu, -1.0), -0.15865525393145707);
  EXPECT_DOUBLE_EQ(ap(OpKind::gelu, 3.0), 2.99595030590511);
  EXPECT_DOUBLE_EQ(ap(OpKind::gelu_tanh, 1.0), 0.8411919906082768);
  EXPECT_DOUBLE_EQ(ap(OpKind::gelu_tanh, -2.0), -0.04540230591222494);
  EXPECT_DOUBLE_EQ(ap(OpKind::tanh, 0.5), 0.46211715726000974);
  EXPECT_DOUBLE_EQ(ap(OpKind::sigmoid, 1.0), 0.7310585786300049);
  EXPECT_DOUBLE_EQ(ap(OpKind::sigmoid, -2.0), 0.11920292202211755);
  EXPECT_DOUBLE_EQ(ap(OpKind::silu, -1.0), -0.2689414213699951);
  EXPECT_DOUBLE_EQ(ap(OpKind::silu, 3.0), 2.8577223804673);
  EXPECT_DOUBLE_EQ(ap(OpKind::mish, 1.0), 0.8650983882673103);
  EXPECT_DOUBLE_EQ(ap(OpKind::mish, -2.0), -0.2525014826957089);
  EXPECT_EQ(ap(OpKind::mish, 1000.0), 1000.0);  // no overflow in the softplus inside
  EXPECT_EQ(ap(OpKind::sigmoid, -1000.0), 0.0);
}

TEST(OpMath, HardActivations) {
  EXPECT_DOUBLE_EQ(ap(OpKind::hardswish, 1.0), 0.6666666666666666);
  EXPECT_DOUBLE_EQ(ap(OpKind::hardswish, -1.0), -0.3333333333333333);
  EXPECT_EQ(ap(OpKind::hardswish, -4.0), 0.0);
  EXPECT_EQ(ap(OpKind::hardswish, 4.0), 4.0);
  EXPECT_EQ(ap(OpKind::hardsigmoid, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(ap(OpKind::hardsigmoid, 1.0), 0.6666666666666666);
  EXPECT_EQ(ap(OpKind::hardsigmoid, -5.0), 0.0);
  EXPECT_EQ(ap(OpKind::hardsigmoid, 5.0), 1.0);
}

TEST(OpMath, SoftplusBetaAndThreshold) {
  EXPECT_DOUBLE_EQ(ap(OpKind::softplus, 1.0), 1.3132616875182228);   // defaults beta 1, threshold 20
  EXPECT_DOUBLE_EQ(ap(OpKind::softplus, -1.0), 0.31326168751822286);
  EXPECT_DOUBLE_EQ(ap(OpKind::softplus, 1.0, {scalar(2.0), scalar(20.0)}), 1.0634640055214863);
  EXPECT_DOUBLE_EQ(ap(OpKind::softplus, 5.0, {scalar(2.0), scalar(20.0)}), 5.000022699449609);
  EXPECT_EQ(ap(OpKind::softplus, 15.0, {scalar(2.0), scalar(20.0)}), 15.0);  // beta*x > threshold: x
  EXPECT_EQ(ap(OpKind::softplus, 21.0), 21.0);
}

TEST(OpMath, ExpLogSqrt) {
  EXPECT_DOUBLE_EQ(ap(OpKind::exp, 1.0), 2.718281828459045);
  EXPECT_DOUBLE_EQ(ap(OpKind::log, 2.0), 0.6931471805599453);
  EXPECT_DOUBLE_EQ(ap(OpKind::sqrt, 2.0), 1.4142135623730951);
  EXPECT_TRUE(std::isnan(ap(OpKind::log, -1.0)));  // as torch.log: NaN, not an error
  EXPECT_EQ(ap(OpKind::log, 0.0), -kInf);
  EXPECT_TRUE(std::isnan(ap(OpKind::sqrt, -1.0)));
}

TEST(OpMath, MissingRequiredOperandThrows) {
  EXPECT_THROW((void)ap(OpKind::add, 1.0), InputError);
  EXPECT_THROW((void)ap(OpKind::clamp, 1.0, {scalar(0.0)}), InputError);
}

TEST(OpMath, Reductions) {
  const double v[] = {0.5, -2.0, 3.0, 1.5};
  auto fold = [&](ReduceKind k) {
    double acc = reduce_init(k);
    for (double x : v) acc = reduce_step(k, acc, x);
    return reduce_finish(k, acc, 4);
  };
  EXPECT_EQ(fold(ReduceKind::min), -2.0);
  EXPECT_EQ(fold(ReduceKind::max), 3.0);
  EXPECT_EQ(fold(ReduceKind::sum), 3.0);
  EXPECT_EQ(fold(ReduceKind::mean), 0.75);
  EXPECT_EQ(reduce_init(ReduceKind::min), kInf);
  EXPECT_EQ(reduce_init(ReduceKind::max), -kInf);
  // NaN anywhere in the channel makes min/max NaN (torch.min(dim) does), and it sticks.
  EXPECT_TRUE(std::isnan(reduce_step(ReduceKind::min, reduce_step(ReduceKind::min, 1.0, kNaN), -5.0)));
  EXPECT_TRUE(std::isnan(reduce_step(ReduceKind::max, kNaN, 5.0)));
}

// Names come from the one op table (spec/ops.hpp); the references keep no copy.
TEST(OpMath, Names) {
  EXPECT_EQ(spec::op_info(OpKind::gelu_tanh).name, "gelu_tanh");
  EXPECT_EQ(spec::reduce_name(ReduceKind::mean), "reduce_mean");
}

// The defaults apply_op takes for left-out operands are the op table's, applied in fp32.
TEST(OpMath, DefaultsComeFromTheOpTable) {
  const double slope = spec::op_info(OpKind::leaky_relu).defaults.at(0);
  EXPECT_EQ(ap(OpKind::leaky_relu, -1.0), -double(float(slope)));
  const auto& ht = spec::op_info(OpKind::hardtanh).defaults;
  EXPECT_EQ(ap(OpKind::hardtanh, -5.0), ht.at(0));
  EXPECT_EQ(ap(OpKind::hardtanh, 5.0), ht.at(1));
  const auto& sp = spec::op_info(OpKind::softplus).defaults;
  EXPECT_EQ(ap(OpKind::softplus, sp.at(1) + 1.0), sp.at(1) + 1.0);  // past the threshold (beta 1): x
}

}  // namespace
}  // namespace fusetune::reference
