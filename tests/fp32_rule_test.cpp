// The fp32 rule's dot-product term (issue 45; docs/verification.md, "The fp32 rule"): KernelBench's
// 1e-4 + 1e-4 |ref| widened by 6 standard deviations of a correct fp32 computation's rounding,
// ref_bounds.cuh ft_var_dot_fp32 carried through the stages. A sum of K = 16384 products whose
// partial sums walk far from 0 and come back (the second half of each row mirrors the first with
// the weight's sign flipped: the exact sum is 0) is where a correct sequential fp32 sum cannot
// meet 1e-4 alone; the term lets it pass, and still rejects TF32 products and an accumulator
// that truncates instead of rounding (the tensor cores' adder without promotion).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "kernel_templates/ref_bounds.cuh"
#include "reference/bounds.hpp"
#include "reference/model_bounds.hpp"
#include "reference/model_data.hpp"
#include "spec/parser.hpp"
#include "tf32_emulation.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::reference {
namespace {

constexpr int64_t kM = 16, kK = 16384, kN = 16;

enum class Sum { fp32, tf32_products, truncating };

// One output's dot product of k = 0..K-1, a[k * as] * b[k * bs], summed in k order as one thread
// of an fp32 GEMM does: fp32 FMAs, on TF32-rounded products, or with an adder that truncates.
float dot(const float* a, int64_t as, const float* b, int64_t bs, int64_t K, Sum how) {
  float s = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    float x = a[k * as], w = b[k * bs];
    if (how == Sum::tf32_products) x = testing::tf32_round(x, false), w = testing::tf32_round(w, false);
    if (how == Sum::truncating) {
      // the exact sum rounded toward zero: a double holds it exactly enough (48-bit product)
      const double t = double(s) + double(x) * double(w);
      float f = float(t);
      if (std::fabs(double(f)) > std::fabs(t)) f = std::nextafter(f, 0.0f);
      s = f;
    } else {
      s = std::fma(x, w, s);
    }
  }
  return s;
}

// C = A B (A (M, K), B (K, N), row-major).
std::vector<float> gemm(const ModelData& d, Sum how) {
  std::vector<float> out(size_t(kM * kN));
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t n = 0; n < kN; ++n)
      out[size_t(m * kN + n)] = dot(&d.input[size_t(m * kK)], 1, &d.weight[size_t(n)], kN, kK, how);
  return out;
}

GpuErrorStats judge(const BoundedReference& ref, const std::vector<float>& out, bool with_term) {
  return compare_bounded(out.data(), ref.values.data(), nullptr, with_term ? ref.var.data() : nullptr, out.size(),
                         MathMode::fp32);
}

const spec::Problem& problem() {
  static const spec::Problem p = spec::parse("matmul(m=16,k=16384,n=16)");
  return p;
}

// The mirrored draw: B's second half is minus its first, A's second half equals its first.
ModelData cancelling_draw() {
  ModelData d = draw_model_data(problem(), 7);
  for (int64_t m = 0; m < kM; ++m)
    for (int64_t k = 0; k < kK / 2; ++k) d.input[size_t(m * kK + k + kK / 2)] = d.input[size_t(m * kK + k)];
  for (int64_t k = 0; k < kK / 2; ++k)
    for (int64_t n = 0; n < kN; ++n) d.weight[size_t((k + kK / 2) * kN + n)] = -d.weight[size_t(k * kN + n)];
  return d;
}

TEST(Fp32Rule, ACorrectLongSumPassesOnlyWithTheDotProductTerm) {
  const ModelData d = cancelling_draw();
  const BoundedReference ref = model_reference_with_bounds(problem(), d, MathMode::fp32);
  for (double v : ref.values) ASSERT_EQ(v, 0.0);  // the mirror cancels exactly
  const std::vector<float> out = gemm(d, Sum::fp32);
  const GpuErrorStats alone = judge(ref, out, false), with = judge(ref, out, true);
  std::printf("fp32 sum: 1e-4 alone worst %.3g (%llu of %llu fail), with the term worst %.3g\n", alone.worst_ratio,
              (unsigned long long)alone.mismatches, (unsigned long long)alone.count, with.worst_ratio);
  EXPECT_GT(alone.mismatches, 0U) << "the draw no longer shows what the term is for";
  EXPECT_EQ(with.mismatches, 0U) << "a correct fp32 sum rejected: worst " << with.worst_ratio;
  EXPECT_LT(with.worst_ratio, 0.6);  // 6 sigma of the model; the emulation's worst is ~3.6 of it
}

// On the plain signed draw (the mirrored one cancels TF32's rounding too: tf32(-w) = -tf32(w)).
TEST(Fp32Rule, Tf32ProductsFailWithTheTerm) {
  const ModelData d = draw_model_data(problem(), 7);
  const BoundedReference ref = model_reference_with_bounds(problem(), d, MathMode::fp32);
  const GpuErrorStats right = judge(ref, gemm(d, Sum::fp32), true);
  const GpuErrorStats s = judge(ref, gemm(d, Sum::tf32_products), true);
  std::printf("signed draw: fp32 worst %.3g; tf32 products worst %.3g, %llu of %llu fail\n", right.worst_ratio,
              s.worst_ratio, (unsigned long long)s.mismatches, (unsigned long long)s.count);
  EXPECT_EQ(right.mismatches, 0U);
  EXPECT_GT(s.worst_ratio, 5.0);
  EXPECT_GT(s.mismatches, s.count / 2);
}

// Positive A and B: a coherent sum (y ~ K/4), where an adder that truncates after every product
// (a kernel adding with round-toward-zero) is off by about K u / 2 relative, 5x the rule's 1e-4
// at K = 16384; rounding to nearest stays near u sqrt(K). (The tensor cores' adder truncates
// once per 8-product k-step: about 0.4 of the rule on one such output here; it fails on
// reductions and long convs, call 130, and the fused kernels promote, FT_PROMOTE.)
TEST(Fp32Rule, ATruncatingAdderFailsWithTheTermOnACoherentSum) {
  ModelData d = draw_model_data(problem(), 9);
  for (float& v : d.input) v = std::fabs(v);
  for (float& v : d.weight) v = std::fabs(v);
  const BoundedReference ref = model_reference_with_bounds(problem(), d, MathMode::fp32);
  const GpuErrorStats right = judge(ref, gemm(d, Sum::fp32), true);
  const GpuErrorStats trunc = judge(ref, gemm(d, Sum::truncating), true);
  std::printf("coherent: rounding worst %.3g, truncating worst %.3g (%llu of %llu fail)\n", right.worst_ratio,
              trunc.worst_ratio, (unsigned long long)trunc.mismatches, (unsigned long long)trunc.count);
  EXPECT_EQ(right.mismatches, 0U);
  EXPECT_GT(trunc.worst_ratio, 2.0);
  EXPECT_EQ(trunc.mismatches, trunc.count);
}

// A sum over 4096 features of a linear's outputs: each output's rounding is independent of the
// others', so the fp32 variances add (ft_reduce_bound_finish, strict); adding their standard
// deviations, as the TF32 rule does for its correlated errors, widened the term by sqrt(4096)
// and let TF32 products pass (the review of 2026-12-07: 0 of 16 rows failed).
TEST(Fp32Rule, AReductionAddsTheVariancesSoTf32ProductsStillFail) {
  const spec::Problem p = spec::parse("linear(m=16,k=4096,n=4096) | reduce_sum(1)");
  const ModelData d = draw_model_data(p, 5);
  const BoundedReference ref = model_reference_with_bounds(p, d, MathMode::fp32);
  const auto pipeline = [&](Sum how) {
    std::vector<float> out;
    for (int64_t m = 0; m < 16; ++m) {
      float total = 0.0f;
      for (int64_t n = 0; n < 4096; ++n)
        total += dot(&d.input[size_t(m * 4096)], 1, &d.weight[size_t(n * 4096)], 1, 4096, how) + d.bias[size_t(n)];
      out.push_back(total);
    }
    return out;
  };
  const GpuErrorStats right = judge(ref, pipeline(Sum::fp32), true);
  const GpuErrorStats tf32 = judge(ref, pipeline(Sum::tf32_products), true);
  std::printf("linear | reduce_sum: fp32 worst %.3g; tf32 products worst %.3g, %llu of %llu fail\n",
              right.worst_ratio, tf32.worst_ratio, (unsigned long long)tf32.mismatches,
              (unsigned long long)tf32.count);
  EXPECT_EQ(right.mismatches, 0U);
  EXPECT_GT(tf32.mismatches, tf32.count / 2);
}

// KernelBench #9's shape (K = N = 8192; four rows of its M = 1024) on the worker's three
// verification draws, weights at nn.Linear's scale: a sequential fp32 GEMM and epilogue pass
// every draw with room to spare (call 130: at U(-1, 1) weights and 1e-4 alone even cuBLAS's
// fp32 GEMM failed, 2.55x), and TF32 products fail the signed-weight draws. Without #9's relu:
// at this scale y ~ 0.3, so relu((y - 2) * 1.5) is 0 almost everywhere on draws 0 and 1 (as in
// KernelBench, whose inputs are drawn the same way) and would show nothing.
TEST(Fp32Rule, KernelBench9sShapePassesEveryDrawInFp32AndFailsInTf32) {
  const spec::Problem p = spec::parse("linear(m=4,k=8192,n=8192) | sub(2) | mul(1.5)");
  constexpr int64_t K = 8192, N = 8192;
  for (int draw = 0; draw < 3; ++draw) {
    SCOPED_TRACE("draw " + std::to_string(draw));
    const ModelData d = worker::model_verification_draw(p, 2026, draw);
    const BoundedReference ref = model_reference_with_bounds(p, d, MathMode::fp32);
    const auto pipeline = [&](Sum how) {
      std::vector<float> out;
      for (int64_t m = 0; m < 4; ++m)
        for (int64_t n = 0; n < N; ++n) {
          const float s = dot(&d.input[size_t(m * K)], 1, &d.weight[size_t(n * K)], 1, K, how);
          out.push_back(((s + d.bias[size_t(n)]) - 2.0f) * 1.5f);
        }
      return out;
    };
    const GpuErrorStats right = judge(ref, pipeline(Sum::fp32), true);
    const GpuErrorStats tf32 = judge(ref, pipeline(Sum::tf32_products), true);
    std::printf("#9 draw %d: fp32 worst %.3g; tf32 products worst %.3g (%llu of %llu fail)\n", draw, right.worst_ratio,
                tf32.worst_ratio, (unsigned long long)tf32.mismatches, (unsigned long long)tf32.count);
    EXPECT_EQ(right.mismatches, 0U);
    EXPECT_LT(right.worst_ratio, 0.25);
    if (draw != 2) {
      EXPECT_GT(tf32.mismatches, 0U) << "TF32 products passed the fp32 rule";
    }
  }
}

// The variance the TF32 rule carries is far larger: using it for the fp32 rule would pass TF32.
TEST(Fp32Rule, TheFp32VarianceIsTheDotProductsNotTf32s) {
  const double n = 8192, b = 1.0 / 9.0, y = 0.3;
  const double fp32 = ft_var_dot_fp32(y, b, n), tf32 = ft_var_conv(y, b, n);
  EXPECT_GT(std::sqrt(tf32 / fp32), 100.0);
  EXPECT_EQ(ft_var_main(y, b, n, 1), fp32);
  EXPECT_EQ(ft_var_main(y, b, n, 0), tf32);
  // An infinite variance (a pole inside the interval) adds nothing: 1e-4 + 1e-4 |ref| stays.
  EXPECT_EQ(ft_fp32_tolerance_var(2.0, ft_bound_inf()), ft_fp32_tolerance(2.0));
  EXPECT_DOUBLE_EQ(ft_fp32_tolerance_var(2.0, 1e-10), ft_fp32_tolerance(2.0) + 6.0 * 1e-5);
}

}  // namespace
}  // namespace fusetune::reference
