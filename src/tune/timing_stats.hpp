#pragma once
// Statistics of repeated timings and the rule that decides when to stop repeating.
// GPU-free so the policy is unit-tested.
#include <vector>

namespace fusetune::tune {

struct TimingPolicy {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 200;
  double max_seconds = 1.5;     // per variant, summed kernel time
  double target_spread = 0.02;  // stop when (q3 - q1) / median is below this
};

struct TimingSummary {
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  int count = 0;
  [[nodiscard]] double spread() const { return median > 0 ? (q3 - q1) / median : 0.0; }
};

TimingSummary summarize(std::vector<double> samples);

// True when enough samples were taken: at least min_reps and either the spread is small,
// max_reps is reached or the time cap is spent.
bool timing_done(const std::vector<double>& samples, const TimingPolicy& policy, double spent_seconds);

}  // namespace fusetune::tune
