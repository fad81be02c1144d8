#include "protocol/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusetune::protocol {

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
  const TimingSummary s = summarize(samples);
  if (policy.behind_ms > 0 && s.q1 > policy.behind_ms) return true;
  return s.spread() < policy.target_spread;
}

SustainPolicy sustain_policy(bool floor, bool follows_another) {
  SustainPolicy p;
  if (follows_another) p.heat_ms = p.reheat_ms;
  if (floor) {
    p.settle = p.floor_settle;
    p.max_ms = p.floor_max_ms;
  }
  return p;
}

bool windows_settled(const std::vector<TimingSummary>& windows, const SustainPolicy& policy) {
  const size_t k = size_t(std::max(2, policy.settle_windows));
  if (windows.size() < k) return false;
  double lo = std::numeric_limits<double>::infinity(), hi = 0, sum = 0, noise = 0;
  for (size_t w = windows.size() - k; w < windows.size(); ++w) {
    const TimingSummary& t = windows[w];
    lo = std::min(lo, t.median);
    hi = std::max(hi, t.median);
    sum += t.median;
    // The standard error of a window's median, from its quartiles: 1.2533 sigma / sqrt(n),
    // sigma about IQR / 1.349.
    if (t.count > 0) noise = std::max(noise, 0.929 * (t.q3 - t.q1) / std::sqrt(double(t.count)));
  }
  const double mean = sum / double(k);
  // Settled: the windows' medians within `settle` of their mean, or, where the samples are so
  // noisy that their medians scatter wider than that, within noise_widths standard errors of
  // each other (plans of microseconds: a confirmation round of five took 4.5-8 s in call 52).
  const double tolerance = std::max(policy.settle * mean, policy.noise_widths * noise);
  return mean > 0 && hi - lo <= tolerance;
}

}  // namespace fusetune::protocol
