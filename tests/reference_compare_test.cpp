// compare(): the tolerance rule, NaN sentinels, infinities, and what each error figure
// covers (see compare.hpp).
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "reference/compare.hpp"

namespace fusetune::reference {
namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ErrorStats cmp(const std::vector<float>& out, const std::vector<double>& ref, double atol = 1e-4,
               double rtol = 1e-4) {
  return compare(out.data(), ref.data(), int64_t(out.size()), atol, rtol);
}

TEST(Compare, ExactMatch) {
  const ErrorStats s = cmp({1.0f, -2.5f, 0.0f}, {1.0, -2.5, 0.0});
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(s.first_bad, -1);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_EQ(s.max_rel, 0.0);
  EXPECT_EQ(s.rel_l2, 0.0);
}

TEST(Compare, ToleranceIsAtolPlusRtolTimesRef) {
  // ref 100: bound 1e-4 + 1e-2 = 0.0101. 100.0078125 (err 0.0078) passes, 100.015625 fails.
  EXPECT_TRUE(cmp({100.0078125f}, {100.0}).ok());
  EXPECT_EQ(cmp({100.015625f}, {100.0}).mismatches, 1);
  // ref 0: only atol. 5e-5 passes, 2e-4 fails.
  EXPECT_TRUE(cmp({5e-5f}, {0.0}).ok());
  EXPECT_EQ(cmp({2e-4f}, {0.0}).mismatches, 1);
}

TEST(Compare, CountsMismatchesAndFirstBad) {
  const ErrorStats s = cmp({1.0f, 2.0f, 3.5f, 4.0f, 9.0f}, {1.0, 2.0, 3.0, 4.0, 5.0});
  EXPECT_EQ(s.mismatches, 2);
  EXPECT_EQ(s.first_bad, 2);
  EXPECT_EQ(s.max_abs, 4.0);
  EXPECT_EQ(s.max_rel, 0.8);
  EXPECT_EQ(s.nan_mismatch, 0);
  // sqrt((0.25 + 16) / (1 + 4 + 9 + 16 + 25))
  EXPECT_DOUBLE_EQ(s.rel_l2, std::sqrt(16.25 / 55.0));
}

TEST(Compare, UnwrittenSentinelNaNIsAMismatch) {
  const ErrorStats s = cmp({1.0f, kNaNf, 3.0f}, {1.0, 2.0, 3.0});
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_EQ(s.nan_mismatch, 1);
  EXPECT_EQ(s.first_bad, 1);
  EXPECT_EQ(s.max_abs, 0.0);  // NaN elements stay out of the error figures
}

TEST(Compare, NaNInBothIsAMatchAndNaNOnlyInRefIsNot) {
  EXPECT_TRUE(cmp({kNaNf, 1.0f}, {kNaN, 1.0}).ok());
  const ErrorStats s = cmp({1.0f}, {kNaN});
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_EQ(s.nan_mismatch, 1);
}

TEST(Compare, Infinities) {
  EXPECT_TRUE(cmp({kInff, -kInff}, {kInf, -kInf}).ok());  // equal infinities match
  EXPECT_EQ(cmp({-kInff}, {kInf}).mismatches, 1);
  // An infinite tolerance (ref = inf) does not let a finite output pass.
  const ErrorStats s = cmp({3.0e38f}, {kInf});
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_EQ(s.max_abs, kInf);
  EXPECT_EQ(s.max_rel, kInf);
  const ErrorStats t = cmp({kInff, 1.0f}, {1.0, 1.0});
  EXPECT_EQ(t.mismatches, 1);
  EXPECT_EQ(t.max_abs, kInf);
  EXPECT_EQ(t.max_rel, kInf);
  EXPECT_EQ(t.rel_l2, 0.0);  // the infinite element is left out of the L2 sums
}

TEST(Compare, MaxRelIgnoresReferencesBelowTheFloor) {
  // |ref| = 1e-7 < kRelFloor: the 100% relative error there is not counted in max_rel
  // (it passes on atol); the element at ref 2 sets max_rel.
  const ErrorStats s = cmp({2e-7f, 2.0002f}, {1e-7, 2.0});
  EXPECT_TRUE(s.ok());
  EXPECT_NEAR(s.max_rel, 1e-4, 1e-6);
  EXPECT_NEAR(s.max_abs, 2e-4, 1e-6);
  // At the floor itself the ratio counts.
  const ErrorStats t = cmp({float(2 * kRelFloor)}, {kRelFloor});
  EXPECT_NEAR(t.max_rel, 1.0, 1e-6);
}

TEST(Compare, AllZeroReferenceGivesAbsoluteL2) {
  const ErrorStats s = cmp({3e-5f, 4e-5f}, {0.0, 0.0});
  EXPECT_TRUE(s.ok());
  EXPECT_NEAR(s.rel_l2, 5e-5, 1e-11);
  EXPECT_EQ(s.max_rel, 0.0);
}

TEST(Compare, EmptyInput) {
  const ErrorStats s = compare(nullptr, nullptr, 0, 1e-4, 1e-4);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.rel_l2, 0.0);
}

}  // namespace
}  // namespace fusetune::reference
