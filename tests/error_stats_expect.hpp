#pragma once
// One comparison's figures against another's that should give the same (a slice merge against the
// whole, the device against its CPU twin): counts, maxima and the first mismatch exactly; the L2
// sums, which add in another order, within 1e-12 relative.
#include <gtest/gtest.h>

#include "reference/gpu_reference.hpp"

namespace fusetune::reference {

inline void expect_same_figures(const GpuErrorStats& want, const GpuErrorStats& got) {
  EXPECT_EQ(got.max_abs, want.max_abs);
  EXPECT_EQ(got.max_rel, want.max_rel);
  EXPECT_EQ(got.worst_ratio, want.worst_ratio);
  EXPECT_EQ(got.mismatches, want.mismatches);
  EXPECT_EQ(got.nonfinite, want.nonfinite);
  EXPECT_EQ(got.unchecked, want.unchecked);
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.first_bad, want.first_bad);
  EXPECT_NEAR(got.rel_l2, want.rel_l2, 1e-12 * want.rel_l2);
  EXPECT_NEAR(got.rel_l2_limit, want.rel_l2_limit, 1e-12 * want.rel_l2_limit);
}

}  // namespace fusetune::reference
