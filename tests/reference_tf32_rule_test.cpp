// GPU-free: the TF32 rule against computations (tests/tf32_emulation.hpp) on the CPU.
//  - A correct TF32 computation passes: TF32 inputs rounded to nearest, products exact, fp32
//    sums in a shuffled order, the epilogue in fp32 with ft_common.cuh's formulas, for small
//    problems (C = 1, C*R*S = 1, chains of every op, every reduction, per-channel operands).
//  - The rule has teeth: planted bugs fail under both rules, and an output rounded to bf16
//    fails the rel-L2 limit.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "reference/bounds.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/problem_data.hpp"
#include "reference/tolerance.hpp"
#include "spec/ops.hpp"
#include "spec_builders.hpp"
#include "tf32_emulation.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;
using testing::Bug;
using testing::Emulation;

using spec_builders::conv;
using spec_builders::op;
using spec_builders::param;
using spec_builders::scalar;

std::string describe(const spec::Problem& p) {
  std::string s = fmt::format("conv c={} k={} r={} |", p.conv.c, p.conv.k, p.conv.r);
  for (const spec::Op& o : p.pre) s += fmt::format(" {}", spec::op_info(o.kind).name);
  if (p.reduce) s += fmt::format(" | {}", spec::reduce_name(*p.reduce));
  for (const spec::Op& o : p.post) s += fmt::format(" {}", spec::op_info(o.kind).name);
  return s;
}

// An output judged under the TF32 rule (against the CPU twin's bounds) and the fp32 rule (with
// the twin's fp32 variances: its dot-product term, as the worker judges it).
struct Judged {
  GpuErrorStats tf32, fp32;
  Verdict tf32_verdict, fp32_verdict;
};

Judged judge_both(const spec::Problem& p, const ProblemData& d, const std::vector<float>& out) {
  const BoundedReference b = reference_with_bounds(p, d);
  Judged j;
  j.tf32 = compare_bounded(out.data(), b.values.data(), b.bound.data(), b.var.data(), b.values.size(), MathMode::tf32);
  const BoundedReference f = reference_with_bounds(p, d, MathMode::fp32);
  j.fp32 = compare_bounded(out.data(), f.values.data(), nullptr, f.var.data(), f.values.size(), MathMode::fp32);
  j.tf32_verdict = judge(j.tf32, MathMode::tf32);
  j.fp32_verdict = judge(j.fp32, MathMode::fp32);
  return j;
}

void expect_tf32_passes(const spec::Problem& p, uint64_t seed, double threshold_fraction = 0.25) {
  SCOPED_TRACE(describe(p) + " seed " + std::to_string(seed));
  const ProblemData d = make_problem_data(p, seed, threshold_fraction);
  const Judged j = judge_both(p, d, testing::emulate(p, d, Emulation{}));
  EXPECT_TRUE(j.tf32_verdict.ok) << j.tf32_verdict.reason;
  EXPECT_EQ(j.tf32.mismatches, 0u);
  EXPECT_LE(j.tf32.worst_ratio, 1.0);
  EXPECT_LE(j.tf32.rel_l2, j.tf32.rel_l2_limit);
  EXPECT_LT(j.tf32.unchecked, j.tf32.count);  // something was checked
}

// ---- a correct TF32 computation passes -------------------------------------------------------

std::vector<spec::Conv> shapes() {
  std::vector<spec::Conv> v;
  v.push_back(conv(2, 3, 9, 7, 5, 3, 3));
  v.push_back(conv(2, 1, 8, 8, 4, 3, 3));  // C = 1
  v.push_back(conv(3, 1, 6, 5, 3, 1, 1));  // C*R*S = 1: a scaled copy of x
  spec::Conv padded = conv(2, 4, 9, 9, 6, 3, 3);
  padded.pad_h = padded.pad_w = 1, padded.stride_h = 2, padded.dil_w = 2;
  v.push_back(padded);
  v.push_back(conv(1, 16, 10, 10, 8, 3, 3));  // C*R*S = 144
  return v;
}

TEST(Tf32Rule, CorrectTf32PassesKernelbenchChains) {
  for (const spec::Conv& c : shapes()) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      spec::Problem p31;
      p31.conv = c;
      p31.num_params = 1;
      p31.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
      expect_tf32_passes(p31, seed);
      spec::Problem p32;
      p32.conv = c;
      p32.pre = {op(OpKind::mul, {scalar(2.0)})};
      p32.reduce = ReduceKind::min;
      expect_tf32_passes(p32, seed);
      spec::Problem bare;
      bare.conv = c;
      expect_tf32_passes(bare, seed, 0.0);
    }
  }
}

// Each op after a scale that spreads conv outputs over its interesting range, binary ops with a
// per-channel operand; ops with a pole or domain edge behind nothing: their ill-conditioned
// elements are unchecked, the rest must pass.
std::vector<std::vector<spec::Op>> single_op_chains() {
  return {
      {op(OpKind::add, {param(0)})}, {op(OpKind::sub, {param(1)})}, {op(OpKind::rsub, {param(0)})},
      {op(OpKind::mul, {param(1)})}, {op(OpKind::div, {param(0)})}, {op(OpKind::rdiv, {param(1)})},
      {op(OpKind::min, {param(0)})}, {op(OpKind::max, {param(1)})}, {op(OpKind::clamp, {scalar(-0.7), scalar(0.4)})},
      {op(OpKind::relu)}, {op(OpKind::leaky_relu, {scalar(0.2)})}, {op(OpKind::leaky_relu, {scalar(-3.0)})},
      {op(OpKind::gelu)}, {op(OpKind::gelu_tanh)}, {op(OpKind::tanh)}, {op(OpKind::sigmoid)}, {op(OpKind::silu)},
      {op(OpKind::mish)}, {op(OpKind::hardswish)}, {op(OpKind::hardsigmoid)}, {op(OpKind::hardtanh)},
      {op(OpKind::softplus)}, {op(OpKind::softplus, {scalar(2.0), scalar(3.0)})}, {op(OpKind::exp)},
      {op(OpKind::log)}, {op(OpKind::abs)}, {op(OpKind::neg)}, {op(OpKind::square)}, {op(OpKind::sqrt)},
  };
}

TEST(Tf32Rule, CorrectTf32PassesEveryOp) {
  for (const std::vector<spec::Op>& chain : single_op_chains()) {
    for (double scale : {1.0, 4.0, 40.0}) {
      spec::Problem p;
      p.conv = shapes()[0];
      p.num_params = 2;
      p.pre = {op(OpKind::mul, {scalar(scale)})};
      p.pre.insert(p.pre.end(), chain.begin(), chain.end());
      expect_tf32_passes(p, 11);
      p.conv = shapes()[2];  // CRS = 1
      expect_tf32_passes(p, 12);
    }
  }
}

// Every op in one chain, then every op again after each reduction (scalars only there).
TEST(Tf32Rule, CorrectTf32PassesLongChainsAndEveryReduction) {
  std::vector<spec::Op> all;
  for (const auto& chain : single_op_chains()) all.insert(all.end(), chain.begin(), chain.end());
  std::vector<spec::Op> all_scalar;
  for (const spec::Op& o : all) {
    spec::Op s = o;
    for (spec::Operand& a : s.args) {
      if (a.per_channel) a = scalar(0.3 + 0.1 * a.param_index);
    }
    all_scalar.push_back(s);
  }
  const std::vector<spec::Op> gentle = {op(OpKind::mul, {scalar(2.0)}), op(OpKind::tanh), op(OpKind::add, {scalar(0.25)}),
                                        op(OpKind::softplus), op(OpKind::sqrt), op(OpKind::sigmoid)};
  for (const spec::Conv& c : shapes()) {
    spec::Problem p;
    p.conv = c;
    p.num_params = 2;
    p.pre = all;
    expect_tf32_passes(p, 21);
    p.pre = gentle;
    expect_tf32_passes(p, 22);
    for (ReduceKind rk : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
      spec::Problem q;
      q.conv = c;
      q.num_params = 2;
      q.pre = {op(OpKind::mul, {param(0)}), op(OpKind::add, {param(1)}), op(OpKind::gelu)};
      q.reduce = rk;
      expect_tf32_passes(q, 23);
      q.post = gentle;
      expect_tf32_passes(q, 24);
      q.post = all_scalar;
      expect_tf32_passes(q, 25);
    }
  }
}

// A strict fp32 computation passes both rules: the TF32 bound is a superset of fp32's accuracy.
TEST(Tf32Rule, StrictFp32PassesBothRules) {
  spec::Problem p;
  p.conv = shapes()[4];
  p.num_params = 1;
  p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
  const ProblemData d = make_problem_data(p, 5);
  Emulation fp32;
  fp32.tf32 = false;
  const Judged j = judge_both(p, d, testing::emulate(p, d, fp32));
  EXPECT_TRUE(j.tf32_verdict.ok) << j.tf32_verdict.reason;
  EXPECT_TRUE(j.fp32_verdict.ok) << j.fp32_verdict.reason;
  EXPECT_LT(j.tf32.worst_ratio, 0.01);
}

// The accuracy tests' wide-range draw (x over 2^-20 .. 2^20, sums that cancel in part:
// make_wide_range_data) under the fp32 rule: strict fp32 and 3xTF32 products pass with room,
// TF32 products fail. What gpu_fused_conv_test's WideRangeInputsTellThreeTf32FromTf32 expects of
// the kernels holds for the arithmetic first.
TEST(Tf32Rule, WideRangeDrawTellsTf32ProductsFromFp32Ones) {
  spec::Problem p;
  p.conv = conv(2, 64, 12, 12, 16, 3, 3);  // C*R*S = 576, as the presets
  p.num_params = 1;
  p.pre = {op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(0.5)})};
  const ProblemData d = make_wide_range_data(p, 9);
  Emulation fp32, split, tf32;
  fp32.tf32 = false;
  split.split = true;
  const Judged f = judge_both(p, d, testing::emulate(p, d, fp32));
  const Judged s = judge_both(p, d, testing::emulate(p, d, split));
  const Judged t = judge_both(p, d, testing::emulate(p, d, tf32));
  EXPECT_TRUE(f.fp32_verdict.ok) << f.fp32_verdict.reason;
  EXPECT_LT(f.fp32.worst_ratio, 0.1);
  EXPECT_TRUE(s.fp32_verdict.ok) << s.fp32_verdict.reason;
  EXPECT_LT(s.fp32.worst_ratio, 0.1);
  EXPECT_FALSE(t.fp32_verdict.ok) << "TF32 products passed the fp32 rule on the wide-range draw";
  EXPECT_GT(t.fp32.mismatches, f.fp32.count / 20);
  std::printf("  worst error over the fp32 bound: fp32 %.4f, 3xTF32 %.4f, TF32 %.1f (%zu of %zu outputs over)\n",
              f.fp32.worst_ratio, s.fp32.worst_ratio, t.fp32.worst_ratio, size_t(t.fp32.mismatches),
              size_t(t.fp32.count));
}

// The model behind the rel-L2 limit: a round-to-nearest TF32 conv lands well inside it (the H200
// measured 0.74 of sqrt(sum V); docs/runs/2026-11-30/diag-tf32-error.md), with room for small n.
TEST(Tf32Rule, RoundToNearestSitsInsideTheL2Limit) {
  spec::Problem p;
  p.conv = conv(4, 64, 12, 12, 16, 3, 3);
  const ProblemData d = make_problem_data(p, 8, 0.0);
  const Judged j = judge_both(p, d, testing::emulate(p, d, Emulation{}));
  EXPECT_TRUE(j.tf32_verdict.ok) << j.tf32_verdict.reason;
  const double model = (j.tf32.rel_l2_limit - 4 * kUnitFp32) / (2.0 + 3.0 / std::sqrt(double(j.tf32.count)));
  std::printf("  rel_l2 %.3g, model %.3g (ratio %.2f), limit %.3g, worst element %.2f of its bound\n", j.tf32.rel_l2,
              model, j.tf32.rel_l2 / model, j.tf32.rel_l2_limit, j.tf32.worst_ratio);
  EXPECT_GT(j.tf32.rel_l2, 0.4 * model);
  EXPECT_LT(j.tf32.rel_l2, 1.2 * model);
  EXPECT_LT(j.tf32.worst_ratio, 0.5);  // the per-element bound is a worst case: far from typical
}

// Truncating TF32 (inputs chopped toward zero, as some early tensor-core paths did): every
// relative rounding error has the sign of its input, so each product is biased by about -1.5 u_t
// relative and the conv by about -1.5 u_t |y|... The per-element bound (a worst case, 2 u_t A)
// still holds -- truncation errors are at most u_t per input, like rounding's -- but the errors
// no longer average out: rel-L2 comes out near 2.5x the round-to-nearest model
// (diag-tf32-error.md's "model L2 trunc" is 2.6x "model L2 RN"), above the limit of 2 + 3/sqrt(n)
// times it. So the rule rejects a truncating TF32 kernel on problems with enough elements; this
// test records that, and the rule is not widened for it (PyTorch's TF32 rounds to nearest).
TEST(Tf32Rule, TruncatingTf32FailsTheL2LimitButNotTheBound) {
  spec::Problem p;
  p.conv = conv(4, 64, 12, 12, 16, 3, 3);
  const ProblemData d = make_problem_data(p, 8, 0.0);
  Emulation trunc;
  trunc.truncate = true;
  const Judged j = judge_both(p, d, testing::emulate(p, d, trunc));
  std::printf("  truncating TF32: rel_l2 %.3g, limit %.3g, worst element %.2f of its bound\n", j.tf32.rel_l2,
              j.tf32.rel_l2_limit, j.tf32.worst_ratio);
  EXPECT_EQ(j.tf32.mismatches, 0u);
  EXPECT_GT(j.tf32.rel_l2, j.tf32.rel_l2_limit);
  EXPECT_FALSE(j.tf32_verdict.ok);
  EXPECT_NE(j.tf32_verdict.reason.find("relative L2"), std::string::npos) << j.tf32_verdict.reason;
}

// ---- the rule has teeth ----------------------------------------------------------------------

// The buggy output as a TF32 kernel (judged by the TF32 rule) and as a strict fp32 kernel
// (judged by the fp32 rule) would compute it: both rules must reject it.
void expect_both_rules_reject(const spec::Problem& p, const ProblemData& d, Bug bug, const std::string& what) {
  SCOPED_TRACE(what);
  Emulation tf32;
  tf32.bug = bug;
  Emulation fp32 = tf32;
  fp32.tf32 = false;
  const Judged t = judge_both(p, d, testing::emulate(p, d, tf32));
  const Judged f = judge_both(p, d, testing::emulate(p, d, fp32));
  EXPECT_FALSE(t.tf32_verdict.ok) << "the TF32 rule passes " << what;
  EXPECT_FALSE(f.fp32_verdict.ok) << "the fp32 rule passes " << what;
  std::printf("  %-28s tf32: %s\n  %-28s fp32: %s\n", what.c_str(), t.tf32_verdict.reason.c_str(), "",
              f.fp32_verdict.reason.c_str());
  // The same bug without the bug passes: the failure is the bug's.
  EXPECT_TRUE(judge_both(p, d, testing::emulate(p, d, Emulation{})).tf32_verdict.ok);
}

spec::Problem kb31_small() {
  spec::Problem p;
  p.conv = conv(2, 4, 10, 9, 6, 3, 3);
  p.num_params = 1;
  p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
  return p;
}

TEST(Tf32Rule, PlantedBugsFailBothRules) {
  {
    const spec::Problem p = kb31_small();
    const ProblemData d = make_problem_data(p, 31);
    expect_both_rules_reject(p, d, Bug::skip_tap, "one filter tap skipped");
    expect_both_rules_reject(p, d, Bug::bias_shift, "bias of channel k+1");
    expect_both_rules_reject(p, d, Bug::unwritten_row, "one output row unwritten");
  }
  {
    // A non-idempotent chain, applied twice on channel 1.
    spec::Problem p = kb31_small();
    p.pre = {op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
    const ProblemData d = make_problem_data(p, 32);
    expect_both_rules_reject(p, d, Bug::op_twice, "op chain applied twice");
  }
  {
    // min over K channels, where the last channel holds the minimum at some pixels.
    spec::Problem p = kb31_small();
    p.pre = {op(OpKind::mul, {scalar(2.0)})};
    p.num_params = 0;
    p.reduce = ReduceKind::min;
    const ProblemData d = make_problem_data(p, 33);
    const std::vector<double> last_only = [&] {
      spec::Problem q = p;
      q.reduce.reset();
      return reference_output(q, d);
    }();
    const int64_t plane = p.conv.p() * p.conv.q(), K = p.conv.k;
    int argmin_last = 0;
    for (int64_t n = 0; n < p.conv.n; ++n)
      for (int64_t i = 0; i < plane; ++i) {
        double best = std::numeric_limits<double>::infinity();
        int64_t arg = -1;
        for (int64_t k = 0; k < K; ++k) {
          const double v = last_only[size_t((n * K + k) * plane + i)];
          if (v < best) best = v, arg = k;
        }
        argmin_last += arg == K - 1;
      }
    ASSERT_GT(argmin_last, 0) << "the last channel never holds the min: the bug would be invisible";
    expect_both_rules_reject(p, d, Bug::reduce_skips_last, "reduction skips the last channel");
  }
}

// A bf16 output (8 significant bits) of an otherwise correct TF32 pipeline: within a few times
// the per-element worst case, but its errors are 8x TF32's in the mean: the rel-L2 limit catches it.
TEST(Tf32Rule, Bf16OutputFailsTheL2Limit) {
  for (const spec::Conv& c : {shapes()[0], shapes()[4], conv(4, 64, 12, 12, 16, 3, 3)}) {
    spec::Problem p;
    p.conv = c;
    p.num_params = 1;
    p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
    const ProblemData d = make_problem_data(p, 41);
    std::vector<float> out = testing::emulate(p, d, Emulation{});
    for (float& v : out) v = testing::bf16_round(v);
    const Judged j = judge_both(p, d, out);
    SCOPED_TRACE(describe(p));
    std::printf("  bf16 output: rel_l2 %.3g, limit %.3g, %llu of %llu elements outside their bound\n", j.tf32.rel_l2,
                j.tf32.rel_l2_limit, static_cast<unsigned long long>(j.tf32.mismatches),
                static_cast<unsigned long long>(j.tf32.count));
    EXPECT_GT(j.tf32.rel_l2, j.tf32.rel_l2_limit);
    EXPECT_FALSE(j.tf32_verdict.ok);
    EXPECT_FALSE(j.fp32_verdict.ok);
  }
}

// gpu_reference_test's expectations, on the CPU twin first, so that the GPU test (run on an H200)
// asserts nothing the rule does not already do here.
TEST(Tf32Rule, GpuTestCasesHoldOnTheCpu) {
  for (const testing::RuleCase& c : testing::rule_cases()) {
    SCOPED_TRACE(c.name);
    const ProblemData d = make_problem_data(c.problem, testing::kRuleCaseSeed);
    const Judged j = judge_both(c.problem, d, testing::rule_case_output(c, d));
    EXPECT_EQ(j.tf32_verdict.ok, c.correct()) << j.tf32_verdict.reason;
    EXPECT_EQ(j.tf32.unchecked, 0u);
    if (c.bf16) {
      EXPECT_GT(j.tf32.rel_l2, j.tf32.rel_l2_limit);
    }
    if (!c.correct()) {
      EXPECT_FALSE(j.fp32_verdict.ok);
    }
  }
  // CompareFiguresMatchCpuOnFiniteErrors: 1% errors on every 97th element fail both rules.
  spec::Problem p;
  p.conv = conv(2, 16, 20, 21, 20, 3, 3);
  p.conv.pad_h = p.conv.pad_w = 1;
  const ProblemData d = make_problem_data(p, 5);
  const BoundedReference r = reference_with_bounds(p, d);
  std::vector<float> out(r.values.begin(), r.values.end());
  const Judged exact = judge_both(p, d, out);
  EXPECT_TRUE(exact.tf32_verdict.ok && exact.fp32_verdict.ok);
  for (size_t i = 0; i < out.size(); i += 97) out[i] *= 1.01f;
  const Judged off = judge_both(p, d, out);
  EXPECT_GT(off.tf32.mismatches, 0u);
  EXPECT_GT(off.fp32.mismatches, 0u);
  // CompareTakesTheConvAnswersChannels: the fp32-rounded conv passes against the conv's bounds.
  spec::Problem q;
  q.conv = conv(2, 3, 9, 7, 5, 3, 3);
  const ProblemData dq = make_problem_data(q, 6);
  const BoundedReference cq = conv_with_bounds(q.conv, dq.x.data(), dq.w.data());
  const std::vector<float> y32(cq.values.begin(), cq.values.end());
  const GpuErrorStats s = compare_bounded(y32.data(), cq.values.data(), cq.bound.data(), cq.var.data(), y32.size(),
                                          MathMode::tf32);
  EXPECT_TRUE(judge(s, MathMode::tf32).ok) << judge(s, MathMode::tf32).reason;
}

}  // namespace
}  // namespace fusetune::reference
