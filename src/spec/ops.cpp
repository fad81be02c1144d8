#include "spec/ops.hpp"

#include <array>
#include <cstddef>

namespace fusetune::spec {

const std::vector<OpInfo>& all_ops() {
  // Order must follow OpKind: op_info indexes this table by the enum value.
  static const std::vector<OpInfo> table = {
      {OpKind::add, "add", 1, 1, true, {}},
      {OpKind::sub, "sub", 1, 1, true, {}},
      {OpKind::rsub, "rsub", 1, 1, true, {}},
      {OpKind::mul, "mul", 1, 1, true, {}},
      {OpKind::div, "div", 1, 1, true, {}},
      {OpKind::rdiv, "rdiv", 1, 1, true, {}},
      {OpKind::min, "min", 1, 1, true, {}},
      {OpKind::max, "max", 1, 1, true, {}},
      {OpKind::clamp, "clamp", 2, 2, false, {}},
      {OpKind::relu, "relu", 0, 0, false, {}},
      {OpKind::leaky_relu, "leaky_relu", 0, 1, false, {0.01}},  // PyTorch's default slope
      {OpKind::gelu, "gelu", 0, 0, false, {}},
      {OpKind::gelu_tanh, "gelu_tanh", 0, 0, false, {}},
      {OpKind::tanh, "tanh", 0, 0, false, {}},
      {OpKind::sigmoid, "sigmoid", 0, 0, false, {}},
      {OpKind::silu, "silu", 0, 0, false, {}},
      {OpKind::mish, "mish", 0, 0, false, {}},
      {OpKind::hardswish, "hardswish", 0, 0, false, {}},
      {OpKind::hardsigmoid, "hardsigmoid", 0, 0, false, {}},
      {OpKind::hardtanh, "hardtanh", 0, 2, false, {-1.0, 1.0}},     // PyTorch's min_val, max_val
      {OpKind::softplus, "softplus", 0, 2, false, {1.0, 20.0}},     // PyTorch's beta, threshold
      {OpKind::exp, "exp", 0, 0, false, {}},
      {OpKind::log, "log", 0, 0, false, {}},
      {OpKind::abs, "abs", 0, 0, false, {}},
      {OpKind::neg, "neg", 0, 0, false, {}},
      {OpKind::square, "square", 0, 0, false, {}},
      {OpKind::sqrt, "sqrt", 0, 0, false, {}},
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
