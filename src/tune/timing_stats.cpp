#include "tune/timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace fusetune::tune {

namespace {
// Linear interpolation between order statistics (the usual "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - double(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}
}  // namespace

TimingSummary summarize(std::vector<double> samples) {
  TimingSummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = int(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.q1 = quantile(samples, 0.25);
  s.median = quantile(samples, 0.5);
  s.q3 = quantile(samples, 0.75);
  return s;
}

bool timing_done(const std::vector<double>& samples, const TimingPolicy& policy, double spent_seconds) {
  const int n = int(samples.size());
  if (n >= policy.max_reps) return true;
  if (n < policy.min_reps) return spent_seconds > 4 * policy.max_seconds;  // a very slow plan
  if (spent_seconds >= policy.max_seconds) return true;
  return summarize(samples).spread() < policy.target_spread;
}

}  // namespace fusetune::tune
