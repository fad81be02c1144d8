#include "reference/bounds.hpp"

#include <cmath>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "reference/l2_model.hpp"
#include "reference/op_math.hpp"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

// spec's enums are the numbering ref_bounds.cuh's dispatch uses: keep them in step.
static_assert(int(spec::SlopeFn::constant) == FT_SLOPE_CONSTANT && int(spec::SlopeFn::mul) == FT_SLOPE_MUL &&
              int(spec::SlopeFn::div) == FT_SLOPE_DIV && int(spec::SlopeFn::leaky_relu) == FT_SLOPE_LEAKY_RELU &&
              int(spec::SlopeFn::exp) == FT_SLOPE_EXP && int(spec::SlopeFn::log) == FT_SLOPE_LOG &&
              int(spec::SlopeFn::sqrt) == FT_SLOPE_SQRT && int(spec::SlopeFn::rdiv) == FT_SLOPE_RDIV &&
              int(spec::SlopeFn::square) == FT_SLOPE_SQUARE && int(spec::SlopeFn::softplus) == FT_SLOPE_SOFTPLUS,
              "spec::SlopeFn must match FT_SLOPE_* in kernel_templates/ref_bounds.cuh");
static_assert(int(spec::ReduceKind::min) == FT_REDUCE_MIN && int(spec::ReduceKind::max) == FT_REDUCE_MAX &&
                  int(spec::ReduceKind::sum) == FT_REDUCE_SUM && int(spec::ReduceKind::mean) == FT_REDUCE_MEAN,
              "spec::ReduceKind must match FT_REDUCE_* in kernel_templates/ref_bounds.cuh");

// Operand i as apply_op reads it (PyTorch's default where left out), 0 where the op has none:
// what the rendered GPU epilogue passes to ft_bound_apply too (render_double.cpp).
double operand_or_zero(const spec::Op& op, size_t i, const double* chan_k) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  return a ? operand_value(*a, chan_k) : 0.0;
}

}  // namespace

Bounded conv_bounded(double y, double a, double b, int64_t crs, MathMode math) {
  return {y, ft_bound_conv(a, y, double(crs)), ft_var_main(y, b, double(crs), math == MathMode::fp32 ? 1 : 0)};
}

void add_bias_bounded(Bounded& x, double bias) {
  x.v += bias;
  x.e = ft_bound_bias(x.e, x.v);
}

void apply_op_bounded(const spec::Op& op, Bounded& x, const double* chan_k) {
  const spec::BoundFact& fact = spec::op_info(op.kind).bound;
  const double f = apply_op(op, x.v, chan_k);
  ft_bound_apply(x.v, x.e, x.var, f, int(fact.fn), fact.slope, operand_or_zero(op, 0, chan_k),
                 operand_or_zero(op, 1, chan_k), fact.ulps, fact.cancels ? 1 : 0, fact.xrel);
}

Bounded reduce_bounded(spec::ReduceKind kind, std::span<const Bounded> channels, MathMode math) {
  double acc = reduce_init(kind);
  ft_reduce_bound r = ft_reduce_bound_init();
  for (const Bounded& c : channels) {
    acc = reduce_step(kind, acc, c.v);
    ft_reduce_bound_step(r, c.v, c.e, c.var);
  }
  Bounded out;
  out.v = reduce_finish(kind, acc, int64_t(channels.size()));
  ft_reduce_bound_finish(r, int(kind), double(channels.size()), out.v, out.e, out.var,
                         math == MathMode::fp32 ? 1 : 0);
  return out;
}

float store_bound(double d) { return ft_bound_store(d); }

GpuErrorStats finish_compare(const ft_compare_acc& acc, uint64_t count, MathMode math, double var_scale) {
  GpuErrorStats s;
  s.max_abs = acc.max_abs;
  s.max_rel = acc.max_rel;
  s.worst_ratio = acc.worst_ratio;
  // As reference::compare: relative to the reference's norm, absolute for an all-zero one.
  s.rel_l2 = acc.ref2 > 0.0 ? std::sqrt(acc.err2 / acc.ref2) : std::sqrt(acc.err2);
  switch (math) {
    case MathMode::tf32: s.rel_l2_limit = rel_l2_limit(acc.var_sum, acc.ref2, double(acc.n_l2), var_scale); break;
    case MathMode::fp32: s.rel_l2_limit = 0.0; break;
  }
  s.mismatches = acc.mismatches;
  s.nonfinite = acc.nonfinite;
  s.unchecked = acc.unchecked;
  s.count = count;
  s.first_bad = acc.first_bad;
  return s;
}

GpuErrorStats compare_bounded(const float* out, const double* ref, const float* bound, const float* var,
                              uint64_t count, MathMode math, double var_scale) {
  const bool tf32 = math == MathMode::tf32;
  if (tf32 && (bound == nullptr || var == nullptr)) {
    throw Error(ExitCode::failure, "compare_bounded: the tf32 rule needs the reference's bounds and variances");
  }
  // ft_compare_element's use_bounds: 1 the TF32 rule; 2 the fp32 rule with the variances; 0 without.
  const int mode = tf32 ? 1 : var != nullptr ? 2 : 0;
  ft_compare_acc acc = ft_compare_acc_zero();
  for (uint64_t i = 0; i < count; ++i) {
    ft_compare_element(acc, i, double(out[i]), ref[i], mode, tf32 ? double(bound[i]) : 0.0,
                       mode != 0 ? double(var[i]) : 0.0);
  }
  return finish_compare(acc, count, math, var_scale);
}

}  // namespace fusetune::reference
