#include "reference/op_math.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// torch.minimum / torch.maximum / clamp propagate NaN from either side; std::fmin would not.
double nan_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return b < a ? b : a;
}
double nan_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  return b > a ? b : a;
}
// torch.clamp(x, lo, hi) is min(max(x, lo), hi), so lo > hi yields hi everywhere.
double clamp(double x, double lo, double hi) { return nan_min(nan_max(x, lo), hi); }

// log(1 + e^x) without overflow for large x; equal to log1p(exp(x)) in exact arithmetic.
double softplus1(double x) { return std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Operand i, or PyTorch's default when the op was built without it (spec::op_info holds the
// defaults). Defaults are Python floats too, applied in fp32 (leaky_relu's 0.01 is
// 0.00999999977...): operand_value rounds them like a written scalar.
double arg(const spec::Op& op, size_t i, const double* chan_k) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a) {
    throw InputError(std::string("op ") + std::string(spec::op_info(op.kind).name) + " needs " +
                     std::to_string(i + 1) + " operand(s), has " + std::to_string(op.args.size()));
  }
  return operand_value(*a, chan_k);
}

}  // namespace

double operand_value(const spec::Operand& a, const double* chan_k) {
  if (!a.per_channel) return double(float(a.value));
  if (chan_k == nullptr || a.param_index < 0) {
    throw InputError("per-channel operand param[" + std::to_string(a.param_index) +
                     "] where no per-channel values exist (after a reduction?)");
  }
  return chan_k[a.param_index];
}

double apply_op(const spec::Op& op, double x, const double* chan_k) {
  switch (op.kind) {
    case OpKind::add: return x + arg(op, 0, chan_k);
    case OpKind::sub: return x - arg(op, 0, chan_k);
    case OpKind::rsub: return arg(op, 0, chan_k) - x;
    case OpKind::mul: return x * arg(op, 0, chan_k);
    case OpKind::div: return x / arg(op, 0, chan_k);
    case OpKind::rdiv: return arg(op, 0, chan_k) / x;
    case OpKind::min: return nan_min(x, arg(op, 0, chan_k));
    case OpKind::max: return nan_max(x, arg(op, 0, chan_k));
    case OpKind::clamp: return clamp(x, arg(op, 0, chan_k), arg(op, 1, chan_k));
    case OpKind::hardtanh:
      return clamp(x, arg(op, 0, chan_k), arg(op, 1, chan_k));
    // clamp_min(x, 0): NaN stays NaN.
    case OpKind::relu: return nan_max(x, 0.0);
    case OpKind::leaky_relu: return x > 0.0 ? x : x * arg(op, 0, chan_k);
    // 0.5 x (1 + erf(x / sqrt 2)) written with erfc, which does not cancel for negative x (1 +
    // erf does, even in float64, below x = -8).
    case OpKind::gelu: return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
    // 0.5 x (1 + tanh u) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): no cancellation.
    case OpKind::gelu_tanh: {
      const double k = std::sqrt(2.0 / std::numbers::pi);
      return x * sigmoid(2.0 * k * (x + 0.044715 * x * x * x));
    }
    case OpKind::tanh: return std::tanh(x);
    case OpKind::sigmoid: return sigmoid(x);
    case OpKind::silu: return x * sigmoid(x);
    case OpKind::mish: return x * std::tanh(softplus1(x));
    case OpKind::hardswish: return x * clamp(x + 3.0, 0.0, 6.0) / 6.0;
    case OpKind::hardsigmoid: return clamp(x + 3.0, 0.0, 6.0) / 6.0;
    case OpKind::softplus: {
      // torch.nn.functional.softplus: linear above the threshold, exactly x there.
      const double beta = arg(op, 0, chan_k);
      const double threshold = arg(op, 1, chan_k);
      return beta * x > threshold ? x : softplus1(beta * x) / beta;
    }
    case OpKind::exp: return std::exp(x);
    case OpKind::log: return std::log(x);
    case OpKind::abs: return std::fabs(x);
    case OpKind::neg: return -x;
    case OpKind::square: return x * x;
    case OpKind::sqrt: return std::sqrt(x);
  }
  throw InputError("unknown op kind " + std::to_string(int(op.kind)));
}

double reduce_init(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::min: return kInf;
    case ReduceKind::max: return -kInf;
    case ReduceKind::sum:
    case ReduceKind::mean: return 0.0;
  }
  throw InputError("unknown reduction kind " + std::to_string(int(kind)));
}

double reduce_step(ReduceKind kind, double acc, double v) {
  switch (kind) {
    case ReduceKind::min: return nan_min(acc, v);
    case ReduceKind::max: return nan_max(acc, v);
    case ReduceKind::sum:
    case ReduceKind::mean: return acc + v;
  }
  throw InputError("unknown reduction kind " + std::to_string(int(kind)));
}

double reduce_finish(ReduceKind kind, double acc, int64_t count) {
  return kind == ReduceKind::mean ? acc / double(count) : acc;
}

}  // namespace fusetune::reference
