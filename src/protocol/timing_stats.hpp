#pragma once
// Statistics of repeated timings and the rule that decides when to stop repeating.
// GPU-free so the policy is unit-tested.
#include <cstddef>
#include <vector>

namespace fusetune::protocol {

struct TimingPolicy {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 200;
  double max_seconds = 1.5;     // per variant, summed kernel time
  double target_spread = 0.02;  // stop when (q3 - q1) / median is below this
  // Stop too once min_reps samples' first quartile is above this (ms; 0: never): the plan is
  // out of reach of the best one measured, and a tight figure of it would decide nothing. A
  // cuDNN conv step keeps a pipeline's spread above 2%: on #31 one such variant 47% behind the
  // best ran all 200 samples in every cold tune, 0.33 s (docs/runs/2026-12-04/call90-picks-ahead-31.tar.xz).
  double behind_ms = 0;
};

struct TimingSummary {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  int count = 0;
  [[nodiscard]] double spread() const { return median > 0 ? (q3 - q1) / median : 0.0; }
};

TimingSummary summarize(std::vector<double> samples);

// True when enough samples were taken: at least min_reps and either the spread is small, the
// first quartile is above behind_ms, max_reps is reached or the time cap is spent.
bool timing_done(const std::vector<double>& samples, const TimingPolicy& policy, double spent_seconds);

// The confirmation round runs each plan back to back (the winner and the runner-up taking turns,
// sustain_round.hpp) until its time settles: a heavy kernel draws the H200 to its power limit
// within a few hundred milliseconds and then runs at the clocks that limit allows (the 3xTF32
// fused conv ~1770 MHz instead of 1980: 10% slower, docs/runs/2026-12-02/call38-timing-regimes.tar.xz),
// which is what a model running it layer after layer sees. Interleaved sample by sample with
// cooler plans it never got there (docs/perf-notes.md, "Timing").
struct SustainPolicy {
  double heat_ms = 300;    // GPU time back to back before a sample counts
  // The heat of a plan timed right after another one (Timer::sustained): the GPU is at its power
  // limit already, and the settle rule below still waits for its clocks to stop moving. (A plan
  // taking turns after the first has none: sustain_round.hpp.)
  double reheat_ms = 100;
  double window_ms = 100;  // a window: at least this much GPU time...
  int min_window = 5;      // ...and at least this many samples
  int settle_windows = 3;  // settled: this many consecutive windows' medians...
  double settle = 0.01;    // ...within this of their mean (3 windows: a drift of 0.5% per window shows)
  double floor_settle = 0.02;  // the same for a floor, a reference rather than a verdict (Timer)
  // A floor's cap, for the same reason: cuDNN's 10 us NHWC conv, 46 to a sample, drifted for the
  // whole 3 s cap and 5.1 s of wall time, on the path of a 13.4 s cold tune (call 86).
  double floor_max_ms = 1000;
  double noise_widths = 4;  // ...or within this many standard errors of a window's median, if wider
  double max_ms = 3000;    // not settled by then: stop anyway
  int max_samples = 20000;
};

// The policy for one plan of a sustained round. `follows_another`: a plan timed right after
// another one, which held the GPU at its power limit just before (reheat_ms). `floor`: the conv
// alone, the reference the report compares with, never a verdict: its samples scatter 2% and its
// windows drift by more than 1% for seconds (cold tunes lost up to 3 s to it in calls 63-64), so
// it settles within floor_settle, and stops at floor_max_ms.
[[nodiscard]] SustainPolicy sustain_policy(bool floor, bool follows_another);

// Whether the last settle_windows of `windows` (each one's summary, in order) have settled: their
// medians within `settle` of their mean, or within noise_widths standard errors of a window's
// median where the samples scatter wider than that.
[[nodiscard]] bool windows_settled(const std::vector<TimingSummary>& windows, const SustainPolicy& policy);

}  // namespace fusetune::protocol
