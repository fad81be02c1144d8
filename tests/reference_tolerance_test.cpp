// GPU-free: judge() (reference/tolerance.hpp), each verdict branch of both rules, with the
// figures named in the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "reference/tolerance.hpp"

namespace fusetune::reference {
namespace {

GpuErrorStats clean() {
  GpuErrorStats e;
  e.max_abs = 1e-5;
  e.max_rel = 2e-5;
  e.rel_l2 = 3e-4;
  e.rel_l2_limit = 8e-4;
  e.worst_ratio = 0.4;
  e.count = 1000;
  return e;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Judge, CleanComparisonsPassBothRules) {
  EXPECT_TRUE(judge(clean(), MathMode::tf32).ok);
  EXPECT_TRUE(judge(clean(), MathMode::fp32).ok);
  EXPECT_TRUE(judge(clean(), MathMode::tf32).reason.empty());
}

TEST(Judge, NonfiniteFailsFirstAndNamesTheCount) {
  for (MathMode m : {MathMode::tf32, MathMode::fp32}) {
    GpuErrorStats e = clean();
    e.nonfinite = 126;
    e.mismatches = 130;
    e.first_bad = 4410;
    const Verdict v = judge(e, m);
    EXPECT_FALSE(v.ok);
    EXPECT_TRUE(contains(v.reason, "126 of 1000")) << v.reason;
    EXPECT_TRUE(contains(v.reason, "unwritten or overflow")) << v.reason;
    EXPECT_TRUE(contains(v.reason, "4410")) << v.reason;
  }
}

TEST(Judge, Fp32MismatchesNameTheToleranceAndFigures) {
  GpuErrorStats e = clean();
  e.mismatches = 7;
  e.max_abs = 0.0123;
  e.worst_ratio = 61.5;
  e.first_bad = 42;
  const Verdict v = judge(e, MathMode::fp32);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(contains(v.reason, "7 of 1000")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "1e-4 + 1e-4*|ref|")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "0.0123")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "61.5")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "42")) << v.reason;
  // fp32 has no rel-L2 criterion: a large rel_l2 with no mismatch passes (the limit is 0 there).
  GpuErrorStats l = clean();
  l.rel_l2_limit = 0;
  EXPECT_TRUE(judge(l, MathMode::fp32).ok);
}

TEST(Judge, Tf32BoundMismatches) {
  GpuErrorStats e = clean();
  e.mismatches = 3;
  e.worst_ratio = 17.25;
  e.max_abs = 0.5;
  e.first_bad = 99;
  const Verdict v = judge(e, MathMode::tf32);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(contains(v.reason, "3 of 1000")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "TF32 bound")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "17.2")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "99")) << v.reason;
}

TEST(Judge, Tf32RelL2Limit) {
  GpuErrorStats e = clean();
  e.rel_l2 = 1.7e-3;
  e.rel_l2_limit = 8.5e-4;
  e.unchecked = 12;
  const Verdict v = judge(e, MathMode::tf32);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(contains(v.reason, "relative L2")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "0.0017")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "0.00085")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "2.00x")) << v.reason;
  EXPECT_TRUE(contains(v.reason, "12 unchecked")) << v.reason;
  // At the limit passes; a NaN figure never does.
  e.rel_l2 = e.rel_l2_limit;
  EXPECT_TRUE(judge(e, MathMode::tf32).ok);
  e.rel_l2 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(judge(e, MathMode::tf32).ok);
}

TEST(Judge, UncheckedElementsAloneDoNotFail) {
  GpuErrorStats e = clean();
  e.unchecked = 400;  // ill-conditioned: counted, never a mismatch
  EXPECT_TRUE(judge(e, MathMode::tf32).ok);
}

}  // namespace
}  // namespace fusetune::reference
