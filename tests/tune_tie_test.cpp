// Noise-aware ties (tune/tie_break.hpp), GPU-free: a winner must beat the runner-up by more
// than the noise measured for the two (the larger interquartile spread, at least 1%); inside
// it the two tie, and fewer registers, then the name, decide, whatever the clock said.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "tune/tie_break.hpp"

namespace fusetune::tune {
namespace {

fusetune::protocol::VariantResult timed(const std::string& name, double median_ms, double spread, int registers) {
  fusetune::protocol::VariantResult r;
  r.variant.name = name;
  r.verified = r.timed = true;
  r.time.median_ms = median_ms;
  r.time.spread = spread;
  r.compile.registers = registers;
  return r;
}

TEST(TieBreak, AWinBeyondTheNoiseStands) {
  const auto d = decide_tie(timed("b.fast", 1.00, 0.004, 64), timed("a.slow", 1.02, 0.005, 16));
  EXPECT_FALSE(d.tie);
  EXPECT_FALSE(d.swap) << "timing decided: registers and names do not matter";
  EXPECT_NEAR(d.gap, 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(d.noise, kMinNoise);
  EXPECT_EQ(d.by, "");
}

TEST(TieBreak, WithinTheNoiseFewerRegistersWin) {
  const auto d = decide_tie(timed("a.fast", 1.000, 0.002, 64), timed("b.slow", 1.008, 0.003, 32));
  EXPECT_TRUE(d.tie);
  EXPECT_TRUE(d.swap);
  EXPECT_EQ(d.by, "registers");
  // The faster one keeps it when it also has fewer registers.
  const auto kept = decide_tie(timed("b.fast", 1.000, 0.002, 32), timed("a.slow", 1.008, 0.003, 64));
  EXPECT_TRUE(kept.tie);
  EXPECT_FALSE(kept.swap);
  EXPECT_EQ(kept.by, "registers");
}

TEST(TieBreak, EqualRegistersFallToTheName) {
  const auto d = decide_tie(timed("epilogue.nhwc.b", 1.000, 0.0, 40), timed("epilogue.nhwc.a", 1.005, 0.0, 40));
  EXPECT_TRUE(d.tie);
  EXPECT_TRUE(d.swap);
  EXPECT_EQ(d.by, "name");
  EXPECT_FALSE(decide_tie(timed("epilogue.nhwc.a", 1.000, 0.0, 40), timed("epilogue.nhwc.b", 1.005, 0.0, 40)).swap);
}

TEST(TieBreak, TheMeasuredSpreadWidensTheNoise) {
  // 3% apart: a win under 1% noise, a tie when either one's spread is 5%.
  EXPECT_FALSE(decide_tie(timed("z", 1.00, 0.005, 64), timed("a", 1.03, 0.005, 16)).tie);
  const auto d = decide_tie(timed("z", 1.00, 0.005, 64), timed("a", 1.03, 0.05, 16));
  EXPECT_TRUE(d.tie);
  EXPECT_TRUE(d.swap);
  EXPECT_DOUBLE_EQ(d.noise, 0.05);
  // Exactly at the noise is within it: the winner has to beat the runner-up by more.
  EXPECT_TRUE(decide_tie(timed("z", 1.0, 0.03125, 64), timed("a", 1.03125, 0.0, 16)).tie);  // exact in binary
  // A non-finite spread (nothing measured) counts as none.
  EXPECT_DOUBLE_EQ(noise_between(timed("a", 1, std::numeric_limits<double>::quiet_NaN(), 1).time,
                                 timed("b", 1, 0.0, 1).time),
                   kMinNoise);
}

TEST(TieBreak, UnknownRegistersComeAfterEveryKnownCount) {
  // A plan without a generated kernel (registers -1, e.g. a library-only pipeline) does not
  // count as "fewer registers".
  const auto d = decide_tie(timed("a.library", 1.000, 0.0, -1), timed("b.kernel", 1.001, 0.0, 255));
  EXPECT_TRUE(d.tie);
  EXPECT_TRUE(d.swap);
  EXPECT_EQ(d.by, "registers");
  EXPECT_TRUE(before_on_secondary_key(timed("z", 1, 0, 0), timed("a", 1, 0, -1)));
  EXPECT_FALSE(before_on_secondary_key(timed("a", 1, 0, -1), timed("z", 1, 0, 0)));
}

TEST(TieBreak, TheDecisionDoesNotDependOnWhichMedianCameOutFaster) {
  // Two runs whose noise ordered the same pair both ways pick the same winner.
  const fusetune::protocol::VariantResult a = timed("epilogue.nchw.b256", 2.000, 0.006, 30);
  const fusetune::protocol::VariantResult b = timed("epilogue.nhwc.t64", 2.010, 0.004, 28);
  fusetune::protocol::VariantResult a2 = a, b2 = b;
  a2.time.median_ms = 2.010;
  b2.time.median_ms = 2.000;
  const auto first = decide_tie(a, b);   // a faster
  const auto second = decide_tie(b2, a2);  // b faster
  ASSERT_TRUE(first.tie && second.tie);
  EXPECT_EQ(first.swap ? b.variant.name : a.variant.name, second.swap ? a2.variant.name : b2.variant.name);
  EXPECT_EQ(first.swap ? b.variant.name : a.variant.name, "epilogue.nhwc.t64");
}

TEST(TieBreak, AnUntimedResultIsNeverWithinNoise) {
  fusetune::protocol::VariantResult untimed = timed("a", 1.0, 0.0, 1);
  untimed.timed = false;
  EXPECT_FALSE(within_noise(untimed, timed("b", 1.0, 0.0, 1)));
  EXPECT_FALSE(within_noise(timed("b", 1.0, 0.0, 1), untimed));
}

}  // namespace
}  // namespace fusetune::tune
