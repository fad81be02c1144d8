#include "tune/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

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

std::optional<size_t> sustain_done(const std::vector<double>& sample_ms, const SustainPolicy& policy) {
  const size_t n = sample_ms.size();
  double total = 0;
  for (double t : sample_ms) total += std::max(0.0, t);
  const bool capped = total >= policy.max_ms || n >= size_t(std::max(1, policy.max_samples));
  // Past the heat, cut windows greedily: each closes at window_ms of GPU time and min_window samples.
  size_t i = 0;
  for (double heat = 0; i < n && heat < policy.heat_ms; ++i) heat += std::max(0.0, sample_ms[i]);
  const size_t heat_end = i;
  std::vector<std::pair<size_t, size_t>> windows;  // complete ones: [first, end)
  while (i < n) {
    const size_t start = i;
    double acc = 0;
    for (; i < n && (acc < policy.window_ms || int(i - start) < policy.min_window); ++i) acc += std::max(0.0, sample_ms[i]);
    if (acc < policy.window_ms || int(i - start) < policy.min_window) break;  // incomplete: still running
    windows.emplace_back(start, i);
  }
  const auto median_of = [&](const std::pair<size_t, size_t>& w) {
    return summarize({sample_ms.begin() + std::ptrdiff_t(w.first), sample_ms.begin() + std::ptrdiff_t(w.second)}).median;
  };
  if (windows.size() >= 2) {
    const auto& prev = windows[windows.size() - 2];
    const double a = median_of(prev), b = median_of(windows.back());
    const double mid = 0.5 * (a + b);
    if (capped || (mid > 0 && std::abs(a - b) <= policy.settle * mid)) return prev.first;
    return std::nullopt;
  }
  if (!capped) return std::nullopt;
  // Capped before two windows (samples of hundreds of milliseconds): what came after the heat,
  // else everything.
  return heat_end < n ? heat_end : size_t(0);
}

}  // namespace fusetune::tune
