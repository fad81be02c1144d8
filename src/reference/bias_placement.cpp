#include "reference/bias_placement.hpp"

#include <algorithm>
#include <cmath>

#include "reference/thresholds.hpp"

namespace fusetune::reference {

namespace {

void keep_finite(std::vector<double>& ts) {
  std::erase_if(ts, [](double t) { return !(std::fabs(t) <= kMaxThreshold); });
}

float nonzero(float bias) { return bias == 0.0f ? 0x1p-20f : bias; }  // moves outputs by ~1e-6

}  // namespace

ChannelWeights channel_weights(const spec::Problem& p, std::span<const float> weight) {
  const int64_t channels = p.channels();
  ChannelWeights w{std::vector<double>(size_t(channels), 0.0), std::vector<double>(size_t(channels), 0.0)};
  const auto add = [&](int64_t ch, double v) {
    w.sum[size_t(ch)] += v;
    w.sq[size_t(ch)] += v * v;
  };
  if (!p.is_conv()) {  // linear: W (N, K)
    const int64_t K = p.gemm.k;
    for (int64_t n = 0; n < channels; ++n)
      for (int64_t k = 0; k < K; ++k) add(n, weight[size_t(n * K + k)]);
    return w;
  }
  const spec::Conv& c = p.conv;
  const int64_t taps = c.t * c.r * c.s;
  if (!c.transposed) {  // (K, C/g, T, R, S): channel k's filter is one run
    const int64_t run = (c.c / c.groups) * taps;
    for (int64_t k = 0; k < channels; ++k)
      for (int64_t e = 0; e < run; ++e) add(k, weight[size_t(k * run + e)]);
    return w;
  }
  // (C, K/g, T, R, S): channel k = group g, kk within it, reads weight[c][kk] for the group's c
  const int64_t kg = c.k / c.groups, cg = c.c / c.groups;
  for (int64_t k = 0; k < channels; ++k) {
    const int64_t g = k / kg, kk = k % kg;
    for (int64_t ci = g * cg; ci < (g + 1) * cg; ++ci)
      for (int64_t e = 0; e < taps; ++e) add(k, weight[size_t((ci * kg + kk) * taps + e)]);
  }
  const double share = 1.0 / double(c.stride_d * c.stride_h * c.stride_w);
  for (int64_t k = 0; k < channels; ++k) w.sum[size_t(k)] *= share, w.sq[size_t(k)] *= share;
  return w;
}

std::vector<bool> place_biases_on_thresholds(const spec::Problem& chain, std::span<float> bias,
                                             const ChannelWeights& w, int num_params, const ChannelParams& params,
                                             double fraction, double x_mean) {
  const auto K = int64_t(bias.size());
  std::vector<bool> placed(size_t(K), false);
  auto chosen = int64_t(std::lround(fraction * double(K)));
  if (fraction > 0.0 && chosen == 0) chosen = 1;  // a tiny K still gets one straddling channel
  std::vector<double> chan_k(size_t(std::max(num_params, 1)));
  for (int64_t j = 0; j < chosen; ++j) {
    const int64_t k = j * K / chosen;
    if (num_params > 0) params(k, chan_k.data());
    std::vector<double> ts = epilogue_thresholds(chain, chan_k.data());
    keep_finite(ts);
    if (ts.empty()) continue;
    const double t = ts[size_t(j) % ts.size()];
    bias[size_t(k)] = nonzero(float(t - x_mean * w.sum[size_t(k)]));
    placed[size_t(k)] = true;
  }
  return placed;
}

void place_reduction_straddle(const spec::Problem& chain, std::span<float> bias, const std::vector<bool>& placed,
                              const ChannelWeights& w, int num_params, const ChannelParams& params, double x_mean,
                              double x_var) {
  if (!chain.reduce) return;
  const auto K = int64_t(bias.size());
  // Phi^-1(2^(-1/K)) by bisection on the normal tail (erfc)
  const double target = 1.0 - std::exp2(-1.0 / double(K));
  double lo = 0.0, hi = 10.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > target ? lo : hi) = mid;
  }
  const double m = (*chain.reduce == spec::ReduceKind::min ? 1.0 : -1.0) * lo;
  std::vector<double> chan_k(size_t(std::max(num_params, 1)));
  for (int64_t k = 0; k < K; ++k) {
    if (placed[size_t(k)]) continue;
    if (num_params > 0) params(k, chan_k.data());
    std::vector<double> ts = reduction_start_points(chain, chan_k.data());
    keep_finite(ts);
    if (ts.empty()) continue;
    bias[size_t(k)] =
        nonzero(float(ts[size_t(k) % ts.size()] - x_mean * w.sum[size_t(k)] + m * std::sqrt(x_var * w.sq[size_t(k)])));
  }
}

}  // namespace fusetune::reference
