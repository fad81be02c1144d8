#pragma once
// Statistics of repeated timings and the rule that decides when to stop repeating.
// GPU-free so the policy is unit-tested.
#include <cstddef>
#include <optional>
#include <vector>

namespace fusetune::tune {

struct TimingPolicy {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 200;
  double max_seconds = 1.5;     // per variant, summed kernel time
  double target_spread = 0.02;  // stop when (q3 - q1) / median is below this
  // Stop too once min_reps samples' first quartile is above this (ms; 0: never): the plan is
  // out of reach of the best one measured, and a tight figure of it would decide nothing. A
  // cuDNN conv step keeps a pipeline's spread above 2%: on #31 one such variant 47% behind the
  // best ran all 200 samples in every cold tune, 0.33 s (docs/runs/2026-12-04/call90-picks-ahead-31).
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

// The confirmation round runs each plan alone, back to back, until its time settles: a heavy
// kernel draws the H200 to its power limit within a few hundred milliseconds and then runs at
// the clocks that limit allows (the 3xTF32 fused conv ~1770 MHz instead of 1980: 10% slower,
// docs/runs/2026-12-02/call38-timing-regimes), which is what a model running it layer after
// layer sees. Interleaved with cooler plans it never got there (docs/perf-notes.md, "Timing").
struct SustainPolicy {
  double heat_ms = 300;    // GPU time back to back before a sample counts
  // The heat of a plan timed right after another one (Timer::sustained): the GPU is at its power
  // limit already, and the settle rule below still waits for its clocks to stop moving.
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

// Heat, windows and the cap count busy GPU time: busy_ms[i] is sample i's span on the GPU, the
// L2 scrubs between its repetitions included (the figure itself is still made of sample_ms).
// For a plan of microseconds the scrubs are most of that span (2 x 60 MB at about 3 TB/s is
// 40 us per repetition): counting only the timed repetitions kept the GPU busy 5x longer than
// the policy meant, 3-4 s a plan (call 51's confirmation rounds, 12-19 s on small problems).
// An empty busy_ms counts sample_ms.
//
// sample_ms: each sample's GPU time in order. Once settled, the index of the first sample of the
// figure: the settled windows and the samples after them. At a cap: the last settle_windows
// complete windows and after; with fewer complete windows (samples of hundreds of milliseconds),
// every sample after the heat, else all of them. nullopt while more samples are needed.
std::optional<size_t> sustain_done(const std::vector<double>& sample_ms, const SustainPolicy& policy,
                                   const std::vector<double>& busy_ms = {});

}  // namespace fusetune::tune
