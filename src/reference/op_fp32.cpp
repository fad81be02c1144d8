#include "reference/op_fp32.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "kernel_templates/ft_math.cuh"
#include "spec/ops.hpp"

namespace fusetune::reference {

float operand_fp32(const spec::Operand& a, const float* chan_k) {
  if (!a.per_channel) return float(a.value);
  if (chan_k == nullptr || a.param_index < 0) {
    throw InputError("per-channel operand param[" + std::to_string(a.param_index) + "] without per-channel values");
  }
  return chan_k[a.param_index];
}

std::optional<float> reciprocal_for_division(double c) {
  const float cf = float(c);
  if (!std::isfinite(cf) || cf == 0.0f) return std::nullopt;
  const float r = float(1.0 / double(cf));
  if (!std::isnormal(r)) return std::nullopt;
  return r;
}

namespace {

float arg(const spec::Op& op, size_t i, const float* chan_k) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a) {
    throw InputError("op " + std::string(spec::op_info(op.kind).name) + " needs " + std::to_string(i + 1) +
                     " operand(s), has " + std::to_string(op.args.size()));
  }
  return operand_fp32(*a, chan_k);
}

float divide(const spec::Op& op, float v, const float* chan_k) {
  const spec::Operand& a = op.args.at(0);
  if (!a.per_channel) {
    if (const std::optional<float> r = reciprocal_for_division(a.value)) return v * *r;
  }
  return v / arg(op, 0, chan_k);
}

}  // namespace

float apply_op_fp32(const spec::Op& op, float v, const float* chan_k) {
  using spec::OpKind;
  switch (op.kind) {
    case OpKind::add: return v + arg(op, 0, chan_k);
    case OpKind::sub: return v - arg(op, 0, chan_k);
    case OpKind::rsub: return arg(op, 0, chan_k) - v;
    case OpKind::mul: return v * arg(op, 0, chan_k);
    case OpKind::div: return divide(op, v, chan_k);
    case OpKind::rdiv: return arg(op, 0, chan_k) / v;
    case OpKind::min: return ft_min(v, arg(op, 0, chan_k));
    case OpKind::max: return ft_max(v, arg(op, 0, chan_k));
    case OpKind::clamp:
    case OpKind::hardtanh: return ft_clamp(v, arg(op, 0, chan_k), arg(op, 1, chan_k));
    case OpKind::relu: return ft_relu(v);
    case OpKind::leaky_relu: return ft_leaky_relu(v, arg(op, 0, chan_k));
    case OpKind::gelu: return ft_gelu(v);
    case OpKind::gelu_tanh: return ft_gelu_tanh(v);
    case OpKind::tanh: return ft_tanh(v);
    case OpKind::sigmoid: return ft_sigmoid(v);
    case OpKind::silu: return ft_silu(v);
    case OpKind::mish: return ft_mish(v);
    case OpKind::hardswish: return ft_hardswish(v);
    case OpKind::hardsigmoid: return ft_hardsigmoid(v);
    case OpKind::softplus: return ft_softplus(v, arg(op, 0, chan_k), arg(op, 1, chan_k));
    case OpKind::exp: return ft_exp(v);
    case OpKind::log: return ft_log(v);
    case OpKind::abs: return std::fabs(v);
    case OpKind::neg: return -v;
    case OpKind::square: return v * v;
    case OpKind::sqrt: return std::sqrt(v);
  }
  return std::numeric_limits<float>::quiet_NaN();
}

}  // namespace fusetune::reference
