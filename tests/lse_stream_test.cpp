// fused-gemm's one-pass logsumexp (kernel_templates/ft_lse.cuh, the same code the device runs),
// on the host: against long double on orders that move the shift often (rising values), never
// (falling), and at random; split into parts and joined as the kernel's lanes and column splits
// join them; and on the special values, as torch.logsumexp treats them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernel_templates/ft_lse.cuh"

namespace {

long double exact_lse(const std::vector<float>& v) {
  long double m = -std::numeric_limits<long double>::infinity();
  for (float x : v) m = std::max(m, (long double)x);
  long double s = 0;
  for (float x : v) s += std::exp((long double)x - m);
  return m + std::log(s);
}

float stream_lse(const std::vector<float>& v, size_t parts = 1) {
  std::vector<ft_lse> p(parts, ft_lse_init());
  for (size_t i = 0; i < v.size(); ++i) ft_lse_add(p[i % parts], v[i]);
  ft_lse r = p[0];
  for (size_t i = 1; i < parts; ++i) r = ft_lse_join(r, p[i]);
  return ft_lse_finish(r);
}

// The stages' bound for a logsumexp of n exact values (stage_bounds.cuh: 2 (8u + 3u ln n + gamma(n))
// + u |lse|), in absolute terms.
double bound(double lse, double n) {
  const double u = std::ldexp(1.0, -24);
  return 2 * (8 * u + 3 * u * std::log(n) + n * u / (1 - n * u)) + u * std::fabs(lse);
}

TEST(LseStream, MatchesLongDoubleOnRisingFallingAndRandomOrders) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 30.0f);
  for (const int n : {1, 2, 7, 64, 8192}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = normal(rng);
    for (int order = 0; order < 3; ++order) {
      if (order == 1) std::sort(v.begin(), v.end());                       // every value a new maximum
      if (order == 2) std::sort(v.begin(), v.end(), std::greater<>());     // the first value the maximum
      const long double want = exact_lse(v);
      for (const size_t parts : {size_t(1), size_t(4), size_t(64)}) {
        const float got = stream_lse(v, parts);
        EXPECT_LE(std::fabs((long double)got - want), bound(double(want), n))
            << "n " << n << " order " << order << " parts " << parts << ": " << got << " vs " << double(want);
      }
    }
  }
}

TEST(LseStream, SpecialValuesAsTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(stream_lse({-inf, -inf}), -inf);             // nothing to add
  EXPECT_EQ(ft_lse_finish(ft_lse_init()), -inf);         // an empty split
  EXPECT_FLOAT_EQ(stream_lse({-inf, 0.0f}), 0.0f);
  EXPECT_EQ(stream_lse({1.0f, inf, 2.0f}), inf);
  EXPECT_EQ(stream_lse({inf, inf}, 2), inf);             // joined: no inf - inf
  EXPECT_TRUE(std::isnan(stream_lse({1.0f, nan, 2.0f})));
  EXPECT_TRUE(std::isnan(stream_lse({nan, 1.0f}, 2)));
  EXPECT_TRUE(std::isnan(stream_lse({1.0f, 2.0f, 3.0f, nan}, 4)));
  // large values: the shifts keep every term at most e^8
  EXPECT_NEAR(stream_lse({80.0f, 88.0f, 88.5f}), double(exact_lse({80.0f, 88.0f, 88.5f})), 1e-5);
}

}  // namespace
