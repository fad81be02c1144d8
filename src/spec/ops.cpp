#include "spec/ops.hpp"

#include <array>
#include <cstddef>

namespace fusetune::spec {

namespace {

// ---- the TF32 rule's facts (docs/verification.md) -------------------------------------------
// slope: sup |f'| for the constant kind. gelu, gelu_tanh, silu and mish are the numerical sup
// of |f'| (1.12890, 1.12899, 1.09984, 1.08850 on a 1e-4 grid over [-30, 30]) rounded up;
// reference_bounds_test checks every constant against finite differences (>= the sup, within 5%).
//
// ulps: the fp32 rendering error (kernel_templates/ft_math.cuh, codegen/op_render.cpp) in units
// of u = 2^-24 of |f(v)| + S*E, so a correctly rounded operation (+ - * /, sqrtf: 0 ulp in CUDA
// without --use_fast_math) is 1. The renderings' primitives: CUDA's expf, erff, tanhf 2 ulp (4u),
// logf 1 ulp (2u), ex2.approx 2 ulp (4u), rcp.approx 1 ulp (2u). ft_exp_sq, the exponential of
// sigmoid, silu, mish, gelu_tanh and softplus, squares an ex2 of the rounded x * fp32(log2(e)/2)
// (0.224u below the exact constant): (1.224 |x| + 11) u, the |x| part reaching the result below 0
// only, so those without an |x| term already (cancels) get xrel (ops.hpp) for its growth there,
// about twice the 1.224. Each figure is about twice the sum of the
// rendering's roundings, and at least twice the worst error measured over the sweep of
// reference/op_sweep.hpp on the CPU (tests/op_math_fp32_test.cpp) and on the H200
// (tests/gpu_op_math_test.cpp; docs/op-math.md has the table):
//   add/sub/rsub/mul/square/sqrt/leaky_relu  one rounding (u)                           -> 2
//   div/rdiv   one, or two as a product with fp32(1/c) (a scalar c)                      -> 4
//   min/max/clamp/relu/hardtanh/abs/neg       exact in fp32                              -> 0
//   hardsigmoid: (x + 3), * fp32(1/6) (3u)                                              -> 4
//   hardswish: + 3, * fp32(1/6), * x (4u; measured 2.4 ulp)                              -> 6
//   exp: expf (4u)                                                                       -> 8
//   log: logf (2u)                                                                       -> 4
//   tanh: tanhf (4u)                                                                     -> 8
//   sigmoid: e^-|x|, 1 + e, rcp.approx, e * r below 0 ((1.224 |x| + 15) u)   -> 30, xrel 2.5
//   silu: x * sigmoid ((1.224 |x| + 16) u)                                     -> 32, xrel 2.5
//   mish: n = e(e + 2) from one e^x, n * rcp(n + 2), * x ((1.224 |x| + 17) u below 0, 17u
//         above; subnormal e^x below x = -87 is covered by the subnormal allowance)  -> 34, xrel 2.5
//   softplus(beta, t): beta * x, e^-|x|, log1p polynomial, / beta (~14u) -- and cancels: the
//         rounding of beta * x moves log1p(e^(beta x)) / beta by sigmoid(beta x) * u |x|, and
//         below 0 the exponential's 1.224 |x| u relative is under that |x| term         -> 16
//   gelu: x / sqrt 2, erff, 1 + erf, 0.5 x * (.) -- cancels: at large negative x, 1 + erf(.)
//         cancels and erff's 2u absolute error becomes ~1.25 u |x| in the result          -> 8
//   gelu_tanh: x sigmoid(2u') with u' the cubic -- exp of a cubic: the cubic's rounding
//         (~3u |u'|) is relative in the result, bounded by ~u |x| absolute              -> 8
constexpr BoundFact constant_slope(double slope, double ulps, bool cancels = false, double xrel = 0.0) {
  return {SlopeKind::constant, SlopeFn::constant, slope, ulps, cancels, xrel};
}
constexpr BoundFact operand_slope(SlopeFn fn, double ulps) { return {SlopeKind::operand, fn, 0.0, ulps, false}; }
constexpr BoundFact local_slope(SlopeFn fn, double ulps) { return {SlopeKind::local, fn, 0.0, ulps, false}; }

}  // namespace

const std::vector<OpInfo>& all_ops() {
  // Order must follow OpKind: op_info indexes this table by the enum value.
  static const std::vector<OpInfo> table = {
      {OpKind::add, "add", 1, 1, true, {}, constant_slope(1.0, 2)},
      {OpKind::sub, "sub", 1, 1, true, {}, constant_slope(1.0, 2)},
      {OpKind::rsub, "rsub", 1, 1, true, {}, constant_slope(1.0, 2)},
      {OpKind::mul, "mul", 1, 1, true, {}, operand_slope(SlopeFn::mul, 2)},
      {OpKind::div, "div", 1, 1, true, {}, operand_slope(SlopeFn::div, 4)},
      {OpKind::rdiv, "rdiv", 1, 1, true, {}, local_slope(SlopeFn::rdiv, 4)},
      {OpKind::min, "min", 1, 1, true, {}, constant_slope(1.0, 0)},
      {OpKind::max, "max", 1, 1, true, {}, constant_slope(1.0, 0)},
      {OpKind::clamp, "clamp", 2, 2, false, {}, constant_slope(1.0, 0)},
      {OpKind::relu, "relu", 0, 0, false, {}, constant_slope(1.0, 0)},
      {OpKind::leaky_relu, "leaky_relu", 0, 1, false, {0.01}, operand_slope(SlopeFn::leaky_relu, 2)},  // PyTorch's default slope
      {OpKind::gelu, "gelu", 0, 0, false, {}, constant_slope(1.13, 8, true)},
      {OpKind::gelu_tanh, "gelu_tanh", 0, 0, false, {}, constant_slope(1.13, 8, true)},
      {OpKind::tanh, "tanh", 0, 0, false, {}, constant_slope(1.0, 8)},
      {OpKind::sigmoid, "sigmoid", 0, 0, false, {}, constant_slope(0.25, 30, false, 2.5)},
      {OpKind::silu, "silu", 0, 0, false, {}, constant_slope(1.1, 32, false, 2.5)},
      {OpKind::mish, "mish", 0, 0, false, {}, constant_slope(1.09, 34, false, 2.5)},
      {OpKind::hardswish, "hardswish", 0, 0, false, {}, constant_slope(1.5, 6)},
      {OpKind::hardsigmoid, "hardsigmoid", 0, 0, false, {}, constant_slope(0.1666666666666667, 4)},  // 1/6, rounded up
      {OpKind::hardtanh, "hardtanh", 0, 2, false, {-1.0, 1.0}, constant_slope(1.0, 0)},  // PyTorch's min_val, max_val
      // PyTorch's beta, threshold. sigmoid(beta x) <= 1 on the smooth branch, 1 on the linear one.
      {OpKind::softplus, "softplus", 0, 2, false, {1.0, 20.0}, {SlopeKind::constant, SlopeFn::softplus, 1.0, 16, true}},
      {OpKind::exp, "exp", 0, 0, false, {}, local_slope(SlopeFn::exp, 8)},
      {OpKind::log, "log", 0, 0, false, {}, local_slope(SlopeFn::log, 4)},
      {OpKind::abs, "abs", 0, 0, false, {}, constant_slope(1.0, 0)},
      {OpKind::neg, "neg", 0, 0, false, {}, constant_slope(1.0, 0)},
      {OpKind::square, "square", 0, 0, false, {}, local_slope(SlopeFn::square, 2)},
      {OpKind::sqrt, "sqrt", 0, 0, false, {}, local_slope(SlopeFn::sqrt, 2)},
  };
  return table;
}

const OpInfo& op_info(OpKind kind) { return all_ops()[static_cast<std::size_t>(kind)]; }

std::optional<OpKind> op_from_name(std::string_view name) {
  for (const OpInfo& info : all_ops()) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

std::optional<Operand> operand_or_default(const Op& op, std::size_t i) {
  if (i < op.args.size()) return op.args[i];
  const OpInfo& info = op_info(op.kind);
  if (i < info.defaults.size()) return Operand{false, info.defaults[i], -1};
  return std::nullopt;
}

std::optional<OpKind> operand_first_form(OpKind kind) {
  switch (kind) {
    case OpKind::sub: return OpKind::rsub;
    case OpKind::div: return OpKind::rdiv;
    case OpKind::add:
    case OpKind::mul:
    case OpKind::min:
    case OpKind::max: return kind;
    default: return std::nullopt;
  }
}

namespace {
constexpr std::array<std::string_view, 4> kReduceNames = {"reduce_min", "reduce_max", "reduce_sum",
                                                          "reduce_mean"};
constexpr std::array<std::string_view, 3> kLayoutNames = {"nchw", "nhwc", "any"};
}  // namespace

std::string_view reduce_name(ReduceKind kind) { return kReduceNames[static_cast<std::size_t>(kind)]; }

std::optional<ReduceKind> reduce_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kReduceNames.size(); ++i) {
    if (kReduceNames[i] == name) return static_cast<ReduceKind>(i);
  }
  return std::nullopt;
}

std::string_view layout_name(Layout layout) { return kLayoutNames[static_cast<std::size_t>(layout)]; }

std::optional<Layout> layout_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kLayoutNames.size(); ++i) {
    if (kLayoutNames[i] == name) return static_cast<Layout>(i);
  }
  return std::nullopt;
}

}  // namespace fusetune::spec
