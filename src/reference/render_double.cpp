#include "reference/render_double.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "common/error.hpp"
#include "reference/gpu_sources.hpp"
#include "reference/problem_check.hpp"
#include "reference/problem_data.hpp"
#include "spec/canonical.hpp"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

// An exact double literal: fmt's shortest form reads back to the same double; ".0" keeps
// "2" from being an int literal. Non-finite values (clamp to inf) go through ref_math.cu.
std::string double_literal(double d) {
  if (std::isnan(d)) return "ft_ref_nan()";
  if (std::isinf(d)) return d > 0 ? "ft_ref_inf()" : "(-ft_ref_inf())";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return std::signbit(d) ? "(" + s + ")" : s;
}

// What op_math's operand_value gives: a scalar rounded to fp32 first, or per-channel
// parameter i at channel k (chan holds [bias][param 0][param 1]..., each K floats).
std::string operand(const spec::Problem& p, const spec::Operand& a) {
  if (!a.per_channel) return double_literal(double(float(a.value)));
  return fmt::format("(double)chan[{}LL + k]", chan_index(p, a.param_index));
}

// Operand i, or its PyTorch default (spec::operand_or_default) as op_math reads it: a default is
// a Python float too, applied in fp32 (leaky_relu's 0.01 is 0.00999999977...).
std::string arg(const spec::Problem& p, const spec::Op& op, size_t i) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a) {  // check_problem rejects this first; kept for direct callers
    throw InputError(fmt::format("op {} needs {} operand(s), has {}", spec::op_info(op.kind).name, i + 1,
                                 op.args.size()));
  }
  return operand(p, *a);
}

// Operand i for ft_bound_apply: as apply_op reads it, "0.0" where the op has none (what
// reference/bounds.cpp passes on the host).
std::string bound_arg(const spec::Problem& p, const spec::Op& op, size_t i) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  return a ? operand(p, *a) : "0.0";
}

// "min(0.5)", "add(param[0])", "relu": the op as the spec wrote it, for comments.
std::string describe(const spec::Op& op) {
  std::string s(spec::op_info(op.kind).name);
  if (op.args.empty()) return s;
  s += "(";
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (i > 0) s += ", ";
    const spec::Operand& a = op.args[i];
    s += a.per_channel ? fmt::format("param[{}]", a.param_index) : fmt::format("{}", a.value);
  }
  return s + ")";
}

// One line per op: the value goes through ft_bound_apply (ref_bounds.cuh) with the op's facts
// (spec::op_info) as literals, exactly as reference/bounds.cpp calls it on the host, carrying its
// bound and variance (both rules read them).
std::string render_chain(const spec::Problem& p, const std::vector<spec::Op>& ops) {
  std::string body;
  for (const spec::Op& op : ops) {
    const spec::BoundFact& f = spec::op_info(op.kind).bound;
    // xrel only where the op has one (ft_bound_apply's default is 0)
    const std::string xrel = f.xrel != 0.0 ? ", " + double_literal(f.xrel) : "";
    body += fmt::format("  ft_bound_apply(v, e, var, {}, {}, {}, {}, {}, {}, {}{});  // {}\n", render_double_op(p, op),
                        int(f.fn), double_literal(f.slope), bound_arg(p, op, 0), bound_arg(p, op, 1),
                        double_literal(f.ulps), f.cancels ? 1 : 0, xrel, describe(op));
  }
  return body;
}

std::string render_reduction(ReduceKind kind, int64_t channels) {
  const char* init = kind == ReduceKind::min ? "ft_ref_inf()" : kind == ReduceKind::max ? "-ft_ref_inf()" : "0.0";
  const char* step = kind == ReduceKind::min   ? "ft_ref_min(acc, v)"
                     : kind == ReduceKind::max ? "ft_ref_max(acc, v)"
                                               : "acc + v";
  // reduce_finish: mean = sum / K, one division in double.
  const std::string finish = kind == ReduceKind::mean ? "acc / " + double_literal(double(channels)) : "acc";
  return fmt::format(
      "// {}\n"
      "__device__ __forceinline__ double ft_ref_reduce_init() {{ return {}; }}\n"
      "__device__ __forceinline__ double ft_ref_reduce_step(double acc, double v) {{ return {}; }}\n"
      "__device__ __forceinline__ double ft_ref_reduce_finish(double acc) {{ return {}; }}\n\n",
      spec::reduce_name(kind), init, step, finish);
}

}  // namespace

std::string render_double_op(const spec::Problem& p, const spec::Op& op) {
  switch (op.kind) {
    case OpKind::add: return "v + " + arg(p, op, 0);
    case OpKind::sub: return "v - " + arg(p, op, 0);
    case OpKind::rsub: return arg(p, op, 0) + " - v";
    case OpKind::mul: return "v * " + arg(p, op, 0);
    case OpKind::div: return "v / " + arg(p, op, 0);
    case OpKind::rdiv: return arg(p, op, 0) + " / v";
    case OpKind::min: return "ft_ref_min(v, " + arg(p, op, 0) + ")";
    case OpKind::max: return "ft_ref_max(v, " + arg(p, op, 0) + ")";
    case OpKind::clamp: return "ft_ref_clamp(v, " + arg(p, op, 0) + ", " + arg(p, op, 1) + ")";
    case OpKind::hardtanh: return "ft_ref_clamp(v, " + arg(p, op, 0) + ", " + arg(p, op, 1) + ")";
    case OpKind::relu: return "ft_ref_max(v, 0.0)";  // clamp_min(x, 0): NaN stays NaN
    case OpKind::leaky_relu: return "ft_ref_leaky_relu(v, " + arg(p, op, 0) + ")";
    case OpKind::gelu: return "ft_ref_gelu(v)";
    case OpKind::gelu_tanh: return "ft_ref_gelu_tanh(v)";
    case OpKind::tanh: return "tanh(v)";
    case OpKind::sigmoid: return "ft_ref_sigmoid(v)";
    case OpKind::silu: return "ft_ref_silu(v)";
    case OpKind::mish: return "ft_ref_mish(v)";
    case OpKind::hardswish: return "ft_ref_hardswish(v)";
    case OpKind::hardsigmoid: return "ft_ref_hardsigmoid(v)";
    case OpKind::softplus:
      return "ft_ref_softplus(v, " + arg(p, op, 0) + ", " + arg(p, op, 1) + ")";
    case OpKind::exp: return "exp(v)";
    case OpKind::log: return "log(v)";
    case OpKind::abs: return "fabs(v)";
    case OpKind::neg: return "-v";
    case OpKind::square: return "v * v";
    case OpKind::sqrt: return "sqrt(v)";
  }
  throw InputError(fmt::format("GPU reference: no double rendering for op kind {}", int(op.kind)));
}

std::string render_reference_epilogue_source(const spec::Problem& p, MathMode math) {
  check_problem(p);
  const spec::Conv& c = p.conv;
  // Both rules carry the variances through the epilogue (the fp32 rule its dot-product term;
  // the main operator's V0 is the math mode's, ref_conv.cu FT_REF_STRICT, and so is how a
  // reduction combines them).
  std::string src = fmt::format(
      "// GPU float64 reference epilogue, rendered by src/reference/render_double.cpp for\n"
      "//   {}\n"
      "// math {}: {}\n"
      "#define FT_REF_RENDERED 1\n"
      "#define FT_N {}\n#define FT_K {}\n#define FT_P {}\n#define FT_Q {}\n"
      "#define FT_REF_HAS_BIAS {}\n#define FT_REF_REDUCE {}\n#define FT_REF_STRICT {}\n",
      spec::canonical(p), math_mode_name(math),
      math == MathMode::fp32 ? "values with the fp32 rule's variances" : "values with the TF32 rule's bounds and variances",
      c.n, c.k, c.p(), c.q(), c.bias ? 1 : 0, p.reduce ? 1 : 0, math == MathMode::fp32 ? 1 : 0);
  if (p.reduce) src += fmt::format("#define FT_REF_REDUCE_KIND {}\n", int(*p.reduce));
  src += "\n";
  src += reference_template("ref_math.cu");
  src += reference_template("ref_bounds.cuh");
  src += "\n// ---- the problem's op chain, in double (rendered) ----\n";
  src += "__device__ __forceinline__ void ft_ref_pre(double& v, double& e, double& var, const float* __restrict__ chan,\n"
         "                                           long long k) {\n"
         "  (void)e;\n  (void)var;\n  (void)chan;\n  (void)k;\n";
  src += render_chain(p, p.pre);
  src += "}\n\n";
  if (p.reduce) src += render_reduction(*p.reduce, c.k);
  // After the reduction there is one channel and no per-channel operands (check_problem).
  src += "__device__ __forceinline__ void ft_ref_post(double& v, double& e, double& var) {\n"
         "  (void)v;\n  (void)e;\n  (void)var;\n";
  src += render_chain(p, p.post);
  src += "}\n\n";
  src += reference_template("ref_epilogue.cu");
  return src;
}

}  // namespace fusetune::reference
