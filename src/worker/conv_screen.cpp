#include "worker/conv_screen.hpp"

#include <algorithm>
#include <cmath>

namespace fusetune::worker {

std::vector<size_t> within_factor(const std::vector<double>& screen_ms, double factor) {
  std::vector<size_t> out;
  if (screen_ms.empty()) return out;
  const double best = *std::min_element(screen_ms.begin(), screen_ms.end());
  if (!std::isfinite(best)) return out;
  for (size_t i = 0; i < screen_ms.size(); ++i)
    if (screen_ms[i] <= factor * best) out.push_back(i);
  return out;
}

std::vector<size_t> verification_order(const std::vector<double>& screen_ms,
                                       const std::vector<std::optional<double>>& median_ms) {
  std::vector<size_t> timed, rest;
  for (size_t i = 0; i < screen_ms.size(); ++i) {
    if (!std::isfinite(screen_ms[i])) continue;
    (i < median_ms.size() && median_ms[i] ? timed : rest).push_back(i);
  }
  std::stable_sort(timed.begin(), timed.end(), [&](size_t a, size_t b) { return *median_ms[a] < *median_ms[b]; });
  std::stable_sort(rest.begin(), rest.end(), [&](size_t a, size_t b) { return screen_ms[a] < screen_ms[b]; });
  timed.insert(timed.end(), rest.begin(), rest.end());
  return timed;
}

}  // namespace fusetune::worker
