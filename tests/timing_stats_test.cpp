// The rules that decide how long a plan is timed (src/tune/timing_stats.hpp): when the first pass
// stops, and when a plan's back-to-back run alone in the confirmation round has settled at the
// clocks the power limit leaves (src/tune/sustain_round.hpp with one plan; the winner and the
// runner-up taking turns: tests/sustain_round_test.cpp). GPU-free: fed sample streams shaped
// like the H200's (calls 34-38).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "worker/sustain_round.hpp"
#include "protocol/timing_stats.hpp"

namespace fusetune::protocol {
namespace {
using worker::SustainRound;

// A plan timed alone (SustainRound with one plan, as Timer::sustained times the baselines and the
// floor): samples until the schedule stops; each sample's time from f(elapsed GPU ms before it).
// The samples, and the index of the figure's first.
template <class F>
std::pair<std::vector<double>, size_t> run_until_settled(F f, const SustainPolicy& p = {}) {
  SustainRound round({p});
  double elapsed = 0;
  for (int guard = 0; guard < 1000000 && round.current(); ++guard) {
    const double t = f(elapsed);
    round.add(t, t);
    elapsed += t;
  }
  if (!round.first(0)) ADD_FAILURE() << "the schedule never stopped";
  return {round.samples(0), round.first(0).value_or(0)};
}

double median_from(const std::vector<double>& s, size_t first) {
  return summarize({s.begin() + std::ptrdiff_t(first), s.end()}).median;
}

TEST(TimingStats, SummaryQuartilesAndSpread) {
  const auto t = summarize({4, 1, 3, 2, 5});
  EXPECT_EQ(t.count, 5);
  EXPECT_DOUBLE_EQ(t.min, 1);
  EXPECT_DOUBLE_EQ(t.median, 3);
  EXPECT_DOUBLE_EQ(t.q1, 2);
  EXPECT_DOUBLE_EQ(t.q3, 4);
  EXPECT_DOUBLE_EQ(t.spread(), 2.0 / 3.0);
  EXPECT_EQ(summarize({}).count, 0);
}

TEST(TimingStats, FirstPassStopsOnSpreadRepsOrTime) {
  const TimingPolicy p;
  EXPECT_FALSE(timing_done(std::vector<double>(5, 1.0), p, 0.01));   // under min_reps
  EXPECT_TRUE(timing_done(std::vector<double>(10, 1.0), p, 0.01));   // steady
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 1.0 : 1.2);
  EXPECT_FALSE(timing_done(noisy, p, 0.01));                          // 20% spread
  EXPECT_TRUE(timing_done(noisy, p, p.max_seconds));                  // out of time
  EXPECT_TRUE(timing_done(std::vector<double>(200, 1.0), p, 0));      // max_reps
  EXPECT_TRUE(timing_done({900.0}, p, 4 * p.max_seconds + 1));        // one very slow plan
}

// A noisy plan already out of reach of the best one stops at min_reps: its first quartile is
// above the cut the tuner gives (1.25x the best first pass), so more samples decide nothing.
TEST(TimingStats, ANoisyPlanOutOfReachStopsAtTheFewestSamples) {
  TimingPolicy p;
  std::vector<double> noisy;  // 1.0 and 1.2 alternating: 20% spread, first quartile 1.0
  for (int i = 0; i < 10; ++i) noisy.push_back(i % 2 ? 1.0 : 1.2);
  EXPECT_FALSE(timing_done(noisy, p, 0.01)) << "no cut: the spread rule keeps sampling";
  p.behind_ms = 0.99;
  EXPECT_TRUE(timing_done(noisy, p, 0.01)) << "all of it behind the cut";
  p.behind_ms = 1.1;
  EXPECT_FALSE(timing_done(noisy, p, 0.01)) << "half of its samples are within the cut";
  p.behind_ms = 0.5;
  EXPECT_FALSE(timing_done(std::vector<double>(9, 1.0), p, 0.01)) << "min_reps first";
}

TEST(TimingStats, SteadyPlanSettlesAfterHeatAndThreeWindows) {
  // 1 ms samples: 300 of heat, then three windows of 100.
  SustainRound round({SustainPolicy{}});
  for (int i = 0; i < 599; ++i) round.add(1.0, 1.0);
  EXPECT_TRUE(round.current());
  round.add(1.0, 1.0);
  EXPECT_FALSE(round.current());
  ASSERT_TRUE(round.first(0));
  EXPECT_EQ(*round.first(0), 300u);
}

TEST(TimingStats, FigureIsTheSustainedTimeNotTheBoostOne) {
  // call 38's 3xTF32 kernel: 2.53 ms at boost clocks, 2.80 once the power limit holds; here
  // reached over 600 ms, longer than the heat.
  const auto [s, first] = run_until_settled([](double t) { return t < 600 ? 2.53 + 0.27 * t / 600 : 2.80; });
  ASSERT_LT(first, s.size());
  double before = 0;  // a settled window may hold the ramp's last samples, not its early ones
  for (size_t i = 0; i < first; ++i) before += s[i];
  EXPECT_GE(before, 450.0);
  EXPECT_NEAR(median_from(s, first), 2.80, 0.005);  // from the first sample it would be ~2.77
}

TEST(TimingStats, KeepsSamplingWhileTheTimeDrifts) {
  // 2% slower per 100 ms for 1.2 s, then flat: windows 2% apart must not count as settled.
  const auto [s, first] = run_until_settled([](double t) { return 1.0 + 0.0002 * std::min(t, 1200.0); });
  double before = 0;
  for (size_t i = 0; i < first; ++i) before += s[i];
  EXPECT_GE(before, 1000.0);
  EXPECT_NEAR(median_from(s, first), 1.24, 0.01);
}

TEST(TimingStats, SlowDriftIsNotMistakenForSettled) {
  // 0.8% slower per 100 ms for 1.5 s, then flat: two windows in a row are under 1% apart, three
  // are not; the figure must be the flat time, not one 7% short of it.
  const auto [s, first] = run_until_settled([](double t) { return 1.0 + 0.00008 * std::min(t, 1500.0); });
  double before = 0;
  for (size_t i = 0; i < first; ++i) before += s[i];
  EXPECT_GE(before, 1200.0);
  EXPECT_NEAR(median_from(s, first), 1.12, 0.006);
}

TEST(TimingStats, AFloorSettlesWithinItsWiderTolerance) {
  // cuDNN's conv alone, as in calls 63-64: window medians 1.4% apart, back and forth. A verdict's
  // plan keeps sampling to the cap; a floor (Timer::sustained: settle = floor_settle) stops at
  // the first three windows after the heat.
  const auto wobble = [](double t) { return int(t / 100) % 2 ? 1.007 : 0.993; };
  SustainPolicy verdict;
  const auto [s1, first1] = run_until_settled(wobble, verdict);
  double total = 0;
  for (double x : s1) total += x;
  EXPECT_GE(total, verdict.max_ms);
  const SustainPolicy floor = sustain_policy(true, false);
  const auto [s2, first2] = run_until_settled(wobble, floor);
  total = 0;
  for (double x : s2) total += x;
  EXPECT_LT(total, floor.heat_ms + 4 * floor.window_ms);
  EXPECT_NEAR(median_from(s2, first2), 1.0, 0.008);
}

TEST(TimingStats, PlanThatNeverSettlesStopsAtTheCap) {
  const SustainPolicy p;
  const auto [s, first] = run_until_settled([](double t) { return 1.0 + 0.0002 * t; }, p);
  double total = 0;
  for (double x : s) total += x;
  EXPECT_GE(total, p.max_ms);
  EXPECT_LT(total, p.max_ms + 2 * p.window_ms);
  double figure = 0;  // its last three windows, the last one cut short by the cap
  for (size_t i = first; i < s.size(); ++i) figure += s[i];
  EXPECT_GT(figure, 2 * p.window_ms);
  EXPECT_LT(figure, 4 * p.window_ms);
}

TEST(TimingStats, AFloorThatNeverSettlesStopsAtItsOwnShorterCap) {
  // A floor is a reference, not a verdict: one that drifts for good (call 86: a 10 us conv, 3 s to
  // the verdicts' cap) stops at floor_max_ms with its last windows as the figure.
  const SustainPolicy floor = sustain_policy(true, false);  // what Timer::sustained gives a floor
  ASSERT_LT(floor.max_ms, SustainPolicy{}.max_ms);
  EXPECT_EQ(sustain_policy(false, false).max_ms, SustainPolicy{}.max_ms);  // a verdict's cap stays
  const auto [s, first] = run_until_settled([](double t) { return 1.0 + 0.0002 * t; }, floor);
  double total = 0;
  for (double x : s) total += x;
  EXPECT_GE(total, floor.max_ms);
  EXPECT_LT(total, floor.max_ms + 2 * floor.window_ms);
  double figure = 0;
  for (size_t i = first; i < s.size(); ++i) figure += s[i];
  EXPECT_GT(figure, 2 * floor.window_ms);
  EXPECT_LT(figure, 4 * floor.window_ms);
}

TEST(TimingStats, APlanAfterAnotherHeatsLessAndOnlyTheFloorGetsTheLooserRule) {
  const SustainPolicy first = sustain_policy(false, false), after = sustain_policy(false, true),
                      floor = sustain_policy(true, true);
  EXPECT_LT(after.heat_ms, first.heat_ms);
  EXPECT_EQ(after.settle, first.settle);
  EXPECT_GT(floor.settle, first.settle);
  EXPECT_EQ(floor.heat_ms, after.heat_ms);
}

TEST(TimingStats, VerySlowPlanStopsAtTheCapWithTheSamplesAfterHeat) {
  const SustainPolicy p;
  const auto [s, first] = run_until_settled([](double) { return 1000.0; }, p);
  EXPECT_EQ(s.size(), 3u);  // 3 s of samples reach max_ms before two windows of 5
  EXPECT_EQ(first, 1u);     // the first one was the heat
}

TEST(TimingStats, ScrubbedShortPlanCountsItsBusyTimeNotOnlyItsTimedTime) {
  // call 51's 9.5 us fused conv: 55 repetitions a sample (0.52 ms timed), each after a 40 us L2
  // scrub, so 2.7 ms of busy GPU per sample. Heat and windows are busy time: 300 ms of heat is
  // about 110 samples, not the 580 that counting timed time alone took.
  const SustainPolicy p;
  SustainRound round({p});
  while (round.current()) {
    round.add(0.52, 2.72);
    ASSERT_LT(round.samples(0).size(), 10000u);
  }
  const size_t n = round.samples(0).size();
  EXPECT_EQ(*round.first(0), size_t(std::ceil(p.heat_ms / 2.72)));
  EXPECT_LE(n, size_t(std::ceil(p.heat_ms / 2.72)) + 3 * size_t(std::ceil(p.window_ms / 2.72)));
  // Counting the timed time alone, the same plan takes 5x the samples.
  SustainRound alone({p});
  while (alone.current()) alone.add(0.52, 0.52);
  EXPECT_GT(alone.samples(0).size(), 4 * n);
}

TEST(TimingStats, NoisyButSteadyPlanSettlesOnItsNoiseNotTheCap) {
  // A plan of microseconds: 0.52 ms timed per sample (2.72 ms busy), each sample +-8% at random
  // around a steady time. A window of about 37 samples has a median good to about 1%, so three
  // windows' medians rarely lie within 1% of each other; within four standard errors they do.
  const auto samples = [](const SustainPolicy& p) {
    SustainRound round({p});
    uint32_t state = 12345;
    while (round.current()) {
      state = state * 1664525u + 1013904223u;
      round.add(0.52 * (0.92 + 0.16 * double(state >> 8) / double(1u << 24)), 2.72);
    }
    return std::pair(round.samples(0), *round.first(0));
  };
  const SustainPolicy p;
  const auto [timed, first] = samples(p);
  const size_t window = size_t(std::ceil(p.window_ms / 2.72));
  EXPECT_LE(timed.size(), size_t(std::ceil(p.heat_ms / 2.72)) + 6 * window);
  EXPECT_NEAR(median_from(timed, first), 0.52, 0.52 * 0.015);
  // The 1% rule alone keeps sampling much longer on the same stream.
  SustainPolicy strict = p;
  strict.noise_widths = 0;
  EXPECT_GT(samples(strict).first.size(), timed.size() + 3 * window);
}

TEST(TimingStats, ZeroTimeSamplesStopAtMaxSamples) {
  SustainPolicy p;
  p.max_samples = 50;
  const auto [s, first] = run_until_settled([](double) { return 0.0; }, p);
  EXPECT_EQ(s.size(), 50u);
  EXPECT_LT(first, s.size());
}

}  // namespace
}  // namespace fusetune::protocol
