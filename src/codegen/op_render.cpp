#include "codegen/op_render.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "codegen/chain_simplify.hpp"
#include "common/error.hpp"
#include "reference/op_fp32.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen {

namespace {

using spec::OpKind;

// Operand i, or PyTorch's default for it (spec::op_info); a missing required one is an error.
std::string operand(const spec::Op& op, size_t i, const ChanLayout& chan) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a) {
    throw InputError("op " + std::string(spec::op_info(op.kind).name) + " needs " + std::to_string(i + 1) +
                     " operand(s), has " + std::to_string(op.args.size()));
  }
  return render_operand(*a, chan);
}

// The shortest decimal that reads back as the same double ("0.1", not "0.10000000000000001").
std::string shortest_double(double value) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string call(std::string_view fn, const std::string& v) { return std::string(fn) + "(" + v + ")"; }

std::string call(std::string_view fn, const std::string& a, const std::string& b) {
  return std::string(fn) + "(" + a + ", " + b + ")";
}

std::string call(std::string_view fn, const std::string& a, const std::string& b, const std::string& c) {
  return std::string(fn) + "(" + a + ", " + b + ", " + c + ")";
}

}  // namespace

std::string fp32_literal(double value) {
  const float f = static_cast<float>(value);
  if (std::isnan(f)) return "FT_NAN";
  if (std::isinf(f)) return f > 0 ? "FT_INF" : "(-FT_INF)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", double(f));
  std::string s = buf;
  // "2" or "-3" must become "2.0f": a bare "2f" is not a C++ literal.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  s += 'f';
  if (s[0] == '-') s = "(" + s + ")";
  return s;
}

std::string render_operand(const spec::Operand& a, const ChanLayout& chan) {
  if (a.value_index >= 0) {
    if (size_t(a.value_index) >= chan.values.size() || chan.values[size_t(a.value_index)].empty())
      throw InputError("an operand names a value this kernel does not carry");
    return chan.values[size_t(a.value_index)];
  }
  if (a.input_index >= 0) throw InputError("an operand names an extra input, which this kernel does not read");
  if (!a.per_channel) return fp32_literal(a.value);
  if (a.param_index < 0) throw InputError("per-channel operand without a parameter index");
  const int64_t offset = chan.param_offset(a.param_index);
  return offset == 0 ? "chan[k]" : "chan[" + std::to_string(offset) + " + k]";
}

std::string render_op_expr(const spec::Op& op, const std::string& v, const ChanLayout& chan) {
  switch (op.kind) {
    case OpKind::add: return v + " + " + operand(op, 0, chan);
    case OpKind::sub: return v + " - " + operand(op, 0, chan);
    case OpKind::rsub: return operand(op, 0, chan) + " - " + v;
    case OpKind::mul: return v + " * " + operand(op, 0, chan);
    case OpKind::div: {
      // A scalar divisor as a product with its reciprocal (reference/op_fp32.hpp says when).
      if (!op.args.empty() && !op.args[0].per_channel) {
        if (const std::optional<float> r = reference::reciprocal_for_division(op.args[0].value)) {
          return v + " * " + fp32_literal(double(*r));
        }
      }
      return v + " / " + operand(op, 0, chan);
    }
    case OpKind::rdiv: return operand(op, 0, chan) + " / " + v;
    case OpKind::min: return call("ft_min", v, operand(op, 0, chan));
    case OpKind::max: return call("ft_max", v, operand(op, 0, chan));
    case OpKind::clamp: return call("ft_clamp", v, operand(op, 0, chan), operand(op, 1, chan));
    case OpKind::hardtanh:
      return call("ft_clamp", v, operand(op, 0, chan), operand(op, 1, chan));
    case OpKind::relu: return call("ft_relu", v);
    case OpKind::leaky_relu: return call("ft_leaky_relu", v, operand(op, 0, chan));
    case OpKind::gelu: return call("ft_gelu", v);
    case OpKind::gelu_tanh: return call("ft_gelu_tanh", v);
    case OpKind::tanh: return call("ft_tanh", v);
    case OpKind::sigmoid: return call("ft_sigmoid", v);
    case OpKind::silu: return call("ft_silu", v);
    case OpKind::mish: return call("ft_mish", v);
    case OpKind::hardswish: return call("ft_hardswish", v);
    case OpKind::hardsigmoid: return call("ft_hardsigmoid", v);
    case OpKind::softplus:
      return call("ft_softplus", v, operand(op, 0, chan), operand(op, 1, chan));
    case OpKind::exp: return call("ft_exp", v);
    case OpKind::log: return call("ft_log", v);
    case OpKind::abs: return call("fabsf", v);
    case OpKind::neg: return "-" + v;  // v is a variable name, so no "--"
    case OpKind::square: return v + " * " + v;
    case OpKind::sqrt: return call("sqrtf", v);
  }
  throw InputError("unknown op kind " + std::to_string(int(op.kind)));
}

std::string op_text(const spec::Op& op) {
  std::string s(spec::op_info(op.kind).name);
  if (op.args.empty()) return s;
  s += '(';
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i > 0) s += ", ";
    const spec::Operand& a = op.args[i];
    if (a.per_channel) {
      s += "param[" + std::to_string(a.param_index) + "]";
    } else {
      s += shortest_double(a.value);
    }
  }
  return s + ')';
}

std::string render_chain_function(const std::string& fn_name, const std::vector<spec::Op>& ops,
                                  const ChanLayout& chan) {
  std::string s = "__device__ __forceinline__ float " + fn_name +
                  "(float v, int k, const float* __restrict__ chan) {\n";
  // Rendered simplified (codegen/chain_simplify.hpp); the comment keeps the chain as written.
  const std::vector<spec::Op> rendered = simplify_chain(ops);
  if (rendered.size() != ops.size()) {
    std::string written;
    for (const auto& op : ops) written += (written.empty() ? "" : " | ") + op_text(op);
    s += "  // simplified from: " + written + "\n";
  }
  for (const auto& op : rendered) s += "  v = " + render_op_expr(op, "v", chan) + ";  // " + op_text(op) + "\n";
  s += "  return v;\n}\n";
  return s;
}

ReduceExprs render_reduce(spec::ReduceKind kind, int64_t k) {
  switch (kind) {
    case spec::ReduceKind::min: return {"FT_INF", "ft_min(acc, v)", "acc"};
    case spec::ReduceKind::max: return {"(-FT_INF)", "ft_max(acc, v)", "acc"};
    case spec::ReduceKind::sum: return {"0.0f", "acc + v", "acc"};
    case spec::ReduceKind::mean: return {"0.0f", "acc + v", "acc / " + fp32_literal(double(k))};
  }
  throw InputError("unknown reduction kind " + std::to_string(int(kind)));
}

std::string render_reduce_functions(spec::ReduceKind kind, int64_t k) {
  const ReduceExprs e = render_reduce(kind, k);
  std::string s = "// " + std::string(spec::reduce_name(kind)) + " over the K channels\n";
  s += "__device__ __forceinline__ float ft_reduce_init() { return " + e.init + "; }\n";
  s += "__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return " + e.step + "; }\n";
  s += "__device__ __forceinline__ float ft_reduce_finish(float acc) { return " + e.finish + "; }\n";
  return s;
}

}  // namespace fusetune::codegen
