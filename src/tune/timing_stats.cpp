#include "tune/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
  const TimingSummary s = summarize(samples);
  if (policy.behind_ms > 0 && s.q1 > policy.behind_ms) return true;
  return s.spread() < policy.target_spread;
}

namespace {

// The first sample after heat_ms of busy GPU time (n when the heat is not over).
size_t heat_end(const std::vector<double>& sample_ms, double heat_ms) {
  size_t i = 0;
  for (double heat = 0; i < sample_ms.size() && heat < heat_ms; ++i) heat += std::max(0.0, sample_ms[i]);
  return i;
}

// Complete windows from `first` on, cut greedily: each closes at window_ms of busy GPU time and
// min_window samples. [first, end) pairs.
std::vector<std::pair<size_t, size_t>> complete_windows(const std::vector<double>& sample_ms, size_t first,
                                                        const SustainPolicy& p) {
  std::vector<std::pair<size_t, size_t>> windows;
  for (size_t i = first; i < sample_ms.size();) {
    const size_t start = i;
    double acc = 0;
    for (; i < sample_ms.size() && (acc < p.window_ms || int(i - start) < p.min_window); ++i)
      acc += std::max(0.0, sample_ms[i]);
    if (acc < p.window_ms || int(i - start) < p.min_window) break;  // the last one is still running
    windows.emplace_back(start, i);
  }
  return windows;
}

}  // namespace

SustainPolicy sustain_policy(bool floor, bool follows_another) {
  SustainPolicy p;
  if (follows_another) p.heat_ms = p.reheat_ms;
  if (floor) {
    p.settle = p.floor_settle;
    p.max_ms = p.floor_max_ms;
  }
  return p;
}

std::optional<size_t> sustain_done(const std::vector<double>& sample_ms, const SustainPolicy& policy,
                                   const std::vector<double>& busy_ms) {
  const size_t n = sample_ms.size();
  const std::vector<double>& busy = busy_ms.size() == n ? busy_ms : sample_ms;
  double total = 0;
  for (double t : busy) total += std::max(0.0, t);
  const bool capped = total >= policy.max_ms || n >= size_t(std::max(1, policy.max_samples));
  const size_t heat = heat_end(busy, policy.heat_ms);
  const auto windows = complete_windows(busy, heat, policy);
  const size_t k = size_t(std::max(2, policy.settle_windows));
  if (windows.size() >= k) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0, sum = 0, noise = 0;
    for (size_t w = windows.size() - k; w < windows.size(); ++w) {
      const auto& [first, end] = windows[w];
      const auto t = summarize({sample_ms.begin() + std::ptrdiff_t(first), sample_ms.begin() + std::ptrdiff_t(end)});
      lo = std::min(lo, t.median);
      hi = std::max(hi, t.median);
      sum += t.median;
      // The standard error of a window's median, from its quartiles: 1.2533 sigma / sqrt(n),
      // sigma about IQR / 1.349.
      noise = std::max(noise, 0.929 * (t.q3 - t.q1) / std::sqrt(double(t.count)));
    }
    const double mean = sum / double(k);
    // Settled: the windows' medians within `settle` of their mean, or, where the samples are so
    // noisy that their medians scatter wider than that, within noise_widths standard errors of
    // each other (plans of microseconds: a confirmation round of five took 4.5-8 s in call 52).
    const double tolerance = std::max(policy.settle * mean, policy.noise_widths * noise);
    if (capped || (mean > 0 && hi - lo <= tolerance)) return windows[windows.size() - k].first;
    return std::nullopt;
  }
  if (!capped) return std::nullopt;
  return heat < n ? heat : size_t(0);
}

}  // namespace fusetune::tune
