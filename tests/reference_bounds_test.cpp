// GPU-free: the TF32 rule's pieces (docs/verification.md). The op facts of spec::op_info
// against finite differences; the arithmetic of kernel_templates/ref_bounds.cuh (storage
// rounded up, the conv bound by hand, reductions); the CPU twin (reference_with_bounds)
// against reference_output and against the formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernel_templates/ref_bounds.cuh"
#include "reference/bounds.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/op_math.hpp"
#include "reference/problem_data.hpp"
#include "spec/ops.hpp"
#include "spec_builders.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUt = 0x1p-11, kU = 0x1p-24;

using spec_builders::conv;
using spec_builders::op;
using spec_builders::param;
using spec_builders::scalar;

// The largest |central difference| of f over [lo, hi] on a grid of `steps`, skipping
// differences that straddle one of `jumps` (a discontinuity is not a slope). Rounding in the
// differences makes them up to ~1e-9 relative too large even for a linear f: comparisons with
// a slope allow kFdNoise.
constexpr double kFdNoise = 1e-7;
template <class F>
double numeric_sup_slope(F f, double lo, double hi, int steps, const std::vector<double>& jumps = {}) {
  const double h = 1e-6 * std::max(1.0, std::max(std::fabs(lo), std::fabs(hi)));
  double sup = 0.0;
  for (int i = 0; i <= steps; ++i) {
    const double x = lo + (hi - lo) * double(i) / double(steps);
    const double a = std::max(lo, x - h), b = std::min(hi, x + h);
    if (b <= a) continue;
    bool straddles = false;
    for (double j : jumps) straddles = straddles || (a <= j && j <= b);
    if (straddles) continue;
    const double d = std::fabs((f(b) - f(a)) / (b - a));
    if (std::isfinite(d)) sup = std::max(sup, d);
  }
  return sup;
}

double slope_of(const spec::Op& o, double v, double e) {
  const spec::BoundFact& f = spec::op_info(o.kind).bound;
  const double a0 = o.args.empty() ? 0.0 : operand_value(o.args[0], nullptr);
  return ft_slope(int(f.fn), f.slope, a0, v, e);
}

// ---- 1. op facts ---------------------------------------------------------------------------

TEST(OpFacts, EveryOpHasAFact) {
  ASSERT_EQ(spec::all_ops().size(), size_t(OpKind::sqrt) + 1);
  for (int i = 0; i <= int(OpKind::sqrt); ++i) {
    const auto kind = static_cast<OpKind>(i);
    const spec::OpInfo& info = spec::op_info(kind);
    SCOPED_TRACE(std::string(info.name));
    EXPECT_EQ(info.kind, kind);
    const spec::BoundFact& f = info.bound;
    EXPECT_GE(f.ulps, 0.0);
    switch (f.kind) {
      case spec::SlopeKind::constant:
        EXPECT_TRUE(f.fn == spec::SlopeFn::constant || f.fn == spec::SlopeFn::softplus);
        EXPECT_GT(f.slope, 0.0);
        break;
      case spec::SlopeKind::operand:
        EXPECT_TRUE(f.fn == spec::SlopeFn::mul || f.fn == spec::SlopeFn::div || f.fn == spec::SlopeFn::leaky_relu);
        EXPECT_EQ(f.slope, 0.0);
        break;
      case spec::SlopeKind::local:
        EXPECT_TRUE(f.fn == spec::SlopeFn::exp || f.fn == spec::SlopeFn::log || f.fn == spec::SlopeFn::sqrt ||
                    f.fn == spec::SlopeFn::rdiv || f.fn == spec::SlopeFn::square);
        EXPECT_EQ(f.slope, 0.0);
        break;
    }
    // Exact ops have no rendering error; every op that rounds has some.
    const bool exact = kind == OpKind::min || kind == OpKind::max || kind == OpKind::clamp || kind == OpKind::relu ||
                       kind == OpKind::hardtanh || kind == OpKind::abs || kind == OpKind::neg;
    EXPECT_EQ(f.ulps == 0.0, exact);
  }
  // The ones whose fp32 rendering cancels at large |x|.
  for (OpKind k : {OpKind::gelu, OpKind::gelu_tanh, OpKind::softplus}) EXPECT_TRUE(spec::op_info(k).bound.cancels);
  // The ones rendered with ft_exp_sq whose allowance has no |x| term otherwise: the relative
  // error of e^(rounded x) grows with |x| (ft_math.cuh), and only those get xrel.
  for (const spec::OpInfo& info : spec::all_ops()) {
    const bool grows = info.kind == OpKind::sigmoid || info.kind == OpKind::silu || info.kind == OpKind::mish;
    EXPECT_EQ(info.bound.xrel > 0.0, grows) << info.name;
  }
}

// xrel adds xrel u (|v| + e) (|f| + S e) to the op's own error: mish at v = -30 with e = 0.
TEST(OpFacts, TheArgumentGrowthTermEntersTheBound) {
  const spec::BoundFact& f = spec::op_info(OpKind::mish).bound;
  double v = -30.0, e = 0.0, var = 0.0;
  const double m = -30.0 * std::tanh(std::log1p(std::exp(-30.0)));
  ft_bound_apply(v, e, var, m, int(f.fn), f.slope, 0.0, 0.0, f.ulps, 0, f.xrel);
  EXPECT_DOUBLE_EQ(e, (f.ulps + f.xrel * 30.0) * 0x1p-24 * std::fabs(m));
  double v0 = -30.0, e0 = 0.0, var0 = 0.0;
  ft_bound_apply(v0, e0, var0, m, int(f.fn), f.slope, 0.0, 0.0, f.ulps, 0);  // without it
  EXPECT_DOUBLE_EQ(e0, f.ulps * 0x1p-24 * std::fabs(m));
  // Above 0 the exponential's share of the error fades: no growth term at v = 30 ...
  double vp = 30.0, ep = 0.0, varp = 0.0;
  const double mp = 30.0 * std::tanh(std::log1p(std::exp(30.0)));
  ft_bound_apply(vp, ep, varp, mp, int(f.fn), f.slope, 0.0, 0.0, f.ulps, 0, f.xrel);
  EXPECT_DOUBLE_EQ(ep, f.ulps * 0x1p-24 * std::fabs(mp));
  // ... and within E of 0 only the part of the interval below 0 counts: E - v.
  double vs = 0.25, es = 1.0, vars = 0.0;
  ft_bound_apply(vs, es, vars, 0.2, int(f.fn), f.slope, 0.0, 0.0, f.ulps, 0, f.xrel);
  EXPECT_DOUBLE_EQ(es, f.slope + (f.ulps + f.xrel * 0.75) * 0x1p-24 * (0.2 + f.slope));
}

// Each global slope is >= the numerical sup of |f'| and within 5% of it.
TEST(OpFacts, GlobalSlopesAreTightUpperBounds) {
  struct Case {
    spec::Op op;
    double lo, hi;
    std::vector<double> jumps;
  };
  const std::vector<Case> cases = {
      {op(OpKind::add, {scalar(0.3)}), -30, 30, {}},
      {op(OpKind::sub, {scalar(0.3)}), -30, 30, {}},
      {op(OpKind::rsub, {scalar(0.3)}), -30, 30, {}},
      {op(OpKind::min, {scalar(0.5)}), -30, 30, {}},
      {op(OpKind::max, {scalar(0.5)}), -30, 30, {}},
      {op(OpKind::clamp, {scalar(-0.7), scalar(0.4)}), -30, 30, {}},
      {op(OpKind::relu), -30, 30, {}},
      {op(OpKind::hardtanh), -30, 30, {}},
      {op(OpKind::abs), -30, 30, {}},
      {op(OpKind::neg), -30, 30, {}},
      {op(OpKind::tanh), -30, 30, {}},
      {op(OpKind::sigmoid), -30, 30, {}},
      {op(OpKind::hardsigmoid), -30, 30, {}},
      {op(OpKind::hardswish), -30, 30, {}},
      {op(OpKind::gelu), -30, 30, {}},
      {op(OpKind::gelu_tanh), -30, 30, {}},
      {op(OpKind::silu), -30, 30, {}},
      {op(OpKind::mish), -30, 30, {}},
      {op(OpKind::softplus), -30, 30, {20.0}},
      {op(OpKind::softplus, {scalar(2.0), scalar(3.0)}), -30, 30, {1.5}},
      {op(OpKind::softplus, {scalar(0.5), scalar(10.0)}), -30, 30, {20.0}},
  };
  for (const Case& c : cases) {
    const spec::BoundFact& f = spec::op_info(c.op.kind).bound;
    SCOPED_TRACE(std::string(spec::op_info(c.op.kind).name));
    ASSERT_EQ(f.kind, spec::SlopeKind::constant);
    const double sup =
        numeric_sup_slope([&](double x) { return apply_op(c.op, x, nullptr); }, c.lo, c.hi, 600000, c.jumps);
    EXPECT_GE(f.slope, sup * (1 - kFdNoise));
    EXPECT_LE(f.slope, 1.05 * sup);
    EXPECT_EQ(slope_of(c.op, 0.3, 0.1), f.slope);  // whatever v and e
  }
}

TEST(OpFacts, OperandSlopesAreTightUpperBounds) {
  for (double a : {0.01, 0.2, -0.5, 1.0, 2.5, -3.0}) {
    SCOPED_TRACE(a);
    for (OpKind k : {OpKind::mul, OpKind::div, OpKind::leaky_relu}) {
      const spec::Op o = op(k, {scalar(a)});
      const double sup = numeric_sup_slope([&](double x) { return apply_op(o, x, nullptr); }, -10, 10, 200000);
      const double s = slope_of(o, 1.0, 0.1);
      EXPECT_GE(s, sup * (1 - kFdNoise)) << spec::op_info(k).name;
      EXPECT_LE(s, 1.05 * sup) << spec::op_info(k).name;
      EXPECT_EQ(slope_of(o, -7.0, 3.0), s);  // the operand alone decides
    }
  }
  EXPECT_EQ(slope_of(op(OpKind::div, {scalar(0.0)}), 1.0, 0.1), kInf);  // a pole everywhere
}

// Local slopes: >= the numerical sup over [v - e, v + e]; +inf where the interval reaches the
// pole or domain edge.
TEST(OpFacts, LocalSlopesBoundTheIntervalAndBlowUpAtEdges) {
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> vd(-6.0, 6.0), ed(0.0, 0.5);
  const std::vector<spec::Op> ops = {op(OpKind::exp), op(OpKind::log), op(OpKind::sqrt),
                                     op(OpKind::rdiv, {scalar(0.7)}), op(OpKind::rdiv, {scalar(-2.0)}),
                                     op(OpKind::square)};
  for (const spec::Op& o : ops) {
    SCOPED_TRACE(std::string(spec::op_info(o.kind).name));
    EXPECT_EQ(spec::op_info(o.kind).bound.kind, spec::SlopeKind::local);
    int finite = 0;
    for (int trial = 0; trial < 300; ++trial) {
      const double v = vd(g), e = trial % 10 == 0 ? 0.0 : ed(g);
      const double s = slope_of(o, v, e);
      if (!std::isfinite(s)) continue;
      ++finite;
      const double lo = v - e, hi = v + e;
      const double sup = e > 0 ? numeric_sup_slope([&](double x) { return apply_op(o, x, nullptr); }, lo, hi, 2000)
                                : 0.0;
      EXPECT_GE(s, sup * (1 - kFdNoise)) << "v " << v << " e " << e;
    }
    EXPECT_GT(finite, 100);
  }
  EXPECT_EQ(slope_of(op(OpKind::log), 0.1, 0.1), kInf);
  EXPECT_EQ(slope_of(op(OpKind::log), -3.0, 0.1), kInf);
  EXPECT_EQ(slope_of(op(OpKind::sqrt), 0.05, 0.1), kInf);
  EXPECT_EQ(slope_of(op(OpKind::rdiv, {scalar(1.0)}), -0.05, 0.1), kInf);
  EXPECT_EQ(slope_of(op(OpKind::exp), 800.0, 0.0), kInf);
  EXPECT_TRUE(std::isfinite(slope_of(op(OpKind::log), 0.2, 0.1)));
}

// ---- 2. ref_bounds.cuh's arithmetic ----------------------------------------------------------

TEST(BoundArithmetic, StorageRoundsUp) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  for (int i = 0; i < 20000; ++i) {
    const double d = std::ldexp(mant(g), int(i % 200) - 150);
    const float f = store_bound(d);
    ASSERT_GE(double(f), d) << d;
    ASSERT_LT(double(std::nextafter(f, 0.0f)), d) << d;  // the smallest float >= d
  }
  EXPECT_EQ(store_bound(0.0), 0.0f);
  EXPECT_EQ(store_bound(0.5), 0.5f);  // exact: unchanged
  EXPECT_EQ(store_bound(kInf), std::numeric_limits<float>::infinity());
  EXPECT_EQ(store_bound(std::nan("")), std::numeric_limits<float>::infinity());  // unknown: unchecked
  EXPECT_EQ(store_bound(1e39), std::numeric_limits<float>::infinity());
}

TEST(BoundArithmetic, ConvBoundByHand) {
  // One term: y = x w, A = |x w|, B = (x w)^2.
  const double y = -0.3, a = 0.3, b = 0.09;
  const Bounded c = conv_bounded(y, a, b, 1, MathMode::tf32);
  const double gamma1 = 0x1p-23 / (1 - 0x1p-23);
  EXPECT_DOUBLE_EQ(c.e, (2 * kUt + kUt * kUt) * a + gamma1 * (1 + kUt) * (1 + kUt) * a + kU * 0.3);
  // the inputs' roundings, plus the accumulation's: one k-step, 2 ulps of |y| at most
  EXPECT_DOUBLE_EQ(c.var, 2.0 / 3.0 * kUt * kUt * b + (2 * kU * 0.3) * (2 * kU * 0.3));
  // the accumulation's term grows with the k-steps (8 terms each) and |y|, not A
  const double inputs = 2.0 / 3.0 * kUt * kUt * b;
  EXPECT_NEAR(conv_bounded(y, a, b, 2304, MathMode::tf32).var - inputs, (2 * 288 * kU * 0.3) * (2 * 288 * kU * 0.3),
              1e-22);
  EXPECT_DOUBLE_EQ(conv_bounded(0.0, a, b, 2304, MathMode::tf32).var, inputs);
  // gamma grows with the number of terms; 2^23 terms have no bound.
  EXPECT_GT(conv_bounded(y, a, b, 4096, MathMode::tf32).e, c.e);
  EXPECT_EQ(conv_bounded(y, a, b, int64_t(1) << 23, MathMode::tf32).e, kInf);
}

TEST(BoundArithmetic, BiasAndOps) {
  Bounded x{0.25, 1e-4, 1e-9};
  add_bias_bounded(x, 0.5);
  EXPECT_EQ(x.v, 0.75);
  EXPECT_DOUBLE_EQ(x.e, 1e-4 + kU * (0.75 + 1e-4));
  // mul(2): E = 2E + ulps u (|2v| + 2E), V = 4V.
  Bounded m = x;
  apply_op_bounded(op(OpKind::mul, {scalar(2.0)}), m, nullptr);
  EXPECT_EQ(m.v, 1.5);
  const double ulps = spec::op_info(OpKind::mul).bound.ulps;
  EXPECT_DOUBLE_EQ(m.e, 2 * x.e + ulps * kU * (1.5 + 2 * x.e));
  EXPECT_DOUBLE_EQ(m.var, 4 * x.var);
  // min is exact: E and V pass through.
  Bounded n = x;
  apply_op_bounded(op(OpKind::min, {scalar(0.5)}), n, nullptr);
  EXPECT_EQ(n.v, 0.5);
  EXPECT_EQ(n.e, x.e);
  EXPECT_EQ(n.var, x.var);
  // log at the domain edge: unchecked from there on.
  Bounded l{1e-5, 1e-4, 1e-9};
  apply_op_bounded(op(OpKind::log), l, nullptr);
  EXPECT_EQ(l.e, kInf);
  apply_op_bounded(op(OpKind::mul, {scalar(0.0)}), l, nullptr);
  EXPECT_EQ(l.e, kInf);  // once unchecked, always
  // NaN values keep a finite bound (checked as NaN in both): min(v, NaN).
  Bounded q{0.3, 1e-4, 1e-9};
  apply_op_bounded(op(OpKind::min, {scalar(std::nan(""))}), q, nullptr);
  EXPECT_TRUE(std::isnan(q.v));
  EXPECT_EQ(q.e, 1e-4);
}

TEST(BoundArithmetic, SoftplusSwitchAddsTheJump) {
  const spec::Op sp = op(OpKind::softplus, {scalar(2.0), scalar(3.0)});  // switches at x = 1.5
  Bounded near{1.5 + 1e-5, 1e-4, 0.0}, far{1.0, 1e-4, 0.0};
  apply_op_bounded(sp, near, nullptr);
  apply_op_bounded(sp, far, nullptr);
  const double jump = std::log1p(std::exp(-3.0)) / 2.0;  // 0.0243
  EXPECT_GT(near.e, jump);
  EXPECT_LT(far.e, 1e-3);
}

TEST(BoundArithmetic, Reductions) {
  const std::vector<Bounded> ch = {{1.0, 1e-4, 1e-8}, {-2.0, 3e-4, 4e-8}, {0.5, 2e-4, 9e-8}};
  const Bounded mn = reduce_bounded(ReduceKind::min, ch, MathMode::tf32);
  EXPECT_EQ(mn.v, -2.0);
  EXPECT_EQ(mn.e, 3e-4);   // max_k E_k
  EXPECT_EQ(mn.var, 9e-8);  // max_k V_k
  const Bounded mx = reduce_bounded(ReduceKind::max, ch, MathMode::tf32);
  EXPECT_EQ(mx.v, 1.0);
  EXPECT_EQ(mx.e, 3e-4);
  const double g3 = 3 * 0x1p-23 / (1 - 3 * 0x1p-23);
  const Bounded sum = reduce_bounded(ReduceKind::sum, ch, MathMode::tf32);
  EXPECT_EQ(sum.v, -0.5);
  EXPECT_DOUBLE_EQ(sum.e, 6e-4 + g3 * (3.5 + 6e-4));
  EXPECT_DOUBLE_EQ(sum.var, std::pow(1e-4 + 2e-4 + 3e-4, 2));  // (sum sqrt V)^2
  const Bounded mean = reduce_bounded(ReduceKind::mean, ch, MathMode::tf32);
  EXPECT_DOUBLE_EQ(mean.v, -0.5 / 3);
  const double me = (6e-4 + g3 * (3.5 + 6e-4)) / 3;
  EXPECT_DOUBLE_EQ(mean.e, me + 2 * kU * (0.5 / 3 + me));
  EXPECT_DOUBLE_EQ(mean.var, sum.var / 9);
}

TEST(BoundArithmetic, RelL2Limit) {
  // (2 + 3/sqrt(n)) sqrt(sum V) / sqrt(sum ref^2) + 4u; absolute when sum ref^2 = 0.
  EXPECT_DOUBLE_EQ(ft_rel_l2_limit(4e-8, 1.0, 100), 2.3 * 2e-4 + 4 * kU);
  EXPECT_DOUBLE_EQ(ft_rel_l2_limit(4e-8, 0.0, 100), 2.3 * 2e-4 + 4 * kU);
  EXPECT_DOUBLE_EQ(ft_rel_l2_limit(4e-8, 4.0, 1), 5 * 1e-4 + 4 * kU);
  EXPECT_DOUBLE_EQ(ft_rel_l2_limit(0.0, 1.0, 0), 4 * kU);
}

// ---- 3. the CPU twin -------------------------------------------------------------------------

spec::Problem chain_problem() {
  spec::Problem p;
  p.conv = conv(2, 3, 9, 7, 5, 3, 3);
  p.num_params = 1;
  p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
  return p;
}

TEST(CpuTwin, ValuesAreTheReferenceOutput) {
  for (bool reduce : {false, true}) {
    spec::Problem p = chain_problem();
    if (reduce) {
      p.reduce = ReduceKind::mean;
      p.post = {op(OpKind::tanh)};
    }
    const ProblemData d = make_problem_data(p, 4);
    const std::vector<double> ref = reference_output(p, d);
    const BoundedReference b = reference_with_bounds(p, d);
    ASSERT_EQ(b.values.size(), ref.size());
    ASSERT_EQ(b.bound.size(), ref.size());
    ASSERT_EQ(b.var.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(b.values[i], ref[i], 1e-13 * std::max(1.0, std::fabs(ref[i])));
      EXPECT_GT(b.bound[i], 0.0f);
      EXPECT_GT(b.var[i], 0.0f);
    }
  }
}

// Each element's bound, rebuilt from conv_with_bounds with the formulas step by step.
TEST(CpuTwin, BoundsFollowTheFormulas) {
  const spec::Problem p = chain_problem();
  const ProblemData d = make_problem_data(p, 9);
  const BoundedReference c = conv_with_bounds(p.conv, d.x.data(), d.w.data());
  const BoundedReference b = reference_with_bounds(p, d);
  const std::vector<double> y = conv2d_nchw(p.conv, d.x.data(), d.w.data(), nullptr);
  const int64_t plane = p.conv.p() * p.conv.q(), K = p.conv.k;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(c.values[i], y[i], 1e-13);
    const int64_t k = int64_t(i) / plane % K;
    Bounded x{c.values[i], double(c.bound[i]), double(c.var[i])};
    add_bias_bounded(x, d.chan[size_t(k)]);
    const double chan_k = d.chan[size_t(chan_index(p, 0) + k)];
    for (const spec::Op& o : p.pre) apply_op_bounded(o, x, &chan_k);
    EXPECT_EQ(b.bound[i], store_bound(x.e)) << i;
    EXPECT_EQ(b.var[i], store_bound(x.var)) << i;
    // min(0.5) | add | mul(2): E is about 2 (E0 + u|y + b|) + small
    EXPECT_GE(double(b.bound[i]), 2 * double(c.bound[i]));
  }
  // E0 by hand for element 0: sum over the window.
  double a = 0, bb = 0, yy = 0;
  for (int64_t ci = 0; ci < p.conv.c; ++ci)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t s = 0; s < 3; ++s) {
        const double t = double(d.x[size_t((ci * p.conv.h + r) * p.conv.w + s)]) *
                         double(d.w[size_t((ci * 3 + r) * 3 + s)]);
        yy += t;
        a += std::fabs(t);
        bb += t * t;
      }
  EXPECT_EQ(c.bound[0], store_bound(ft_bound_conv(a, yy, 27.0)));
  EXPECT_EQ(c.var[0], store_bound(ft_var_conv(yy, bb, 27.0)));
}

TEST(CpuTwin, IllConditionedElementsAreUnchecked) {
  spec::Problem p;
  p.conv = conv(1, 2, 8, 8, 3, 3, 3);
  p.pre = {op(OpKind::log)};  // conv outputs of both signs: log near and below 0
  const ProblemData d = make_problem_data(p, 2);
  const BoundedReference b = reference_with_bounds(p, d);
  size_t inf = 0, finite = 0;
  for (size_t i = 0; i < b.values.size(); ++i) {
    if (std::isinf(b.bound[i])) {
      ++inf;
    } else {
      ++finite;
      EXPECT_GT(b.values[i] == b.values[i] ? 1 : 0, 0) << "a checked log has a positive input";
    }
  }
  EXPECT_GT(inf, 0u);
  EXPECT_GT(finite, 0u);
}

}  // namespace
}  // namespace fusetune::reference
