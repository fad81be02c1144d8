#include "reference/problem_data.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "common/error.hpp"
#include "reference/draw_rng.hpp"
#include "reference/parallel.hpp"
#include "reference/problem_check.hpp"
#include "reference/bias_placement.hpp"

namespace fusetune::reference {
namespace {

// Buffers are filled in fixed-size chunks, each from its own engine, so big inputs fill in
// parallel and the values still do not depend on the thread count.
constexpr int64_t kChunk = int64_t(1) << 20;

enum Stream : uint64_t { kStreamX = 1, kStreamW = 2, kStreamBias = 3, kStreamXSigned = 4, kStreamParam0 = 16 };

using detail::mix;
using detail::symmetric;
using detail::unit_open;

template <class Draw>
void fill(float* out, int64_t count, uint64_t seed, uint64_t stream, Draw draw) {
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  detail::parallel_for(chunks, double(kChunk), [&](int64_t c) {
    std::mt19937_64 g(mix(seed, stream, uint64_t(c)));
    const int64_t end = std::min(count, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < end; ++i) out[i] = draw(g);
  });
}

// m * 2^e, m an odd multiple of 2^-23 in (1, 2), e in [-20, 19]: one 64-bit draw each
// (mantissa from bits 0-21, exponent from bits 32-63).
float wide(std::mt19937_64& g) {
  const uint64_t r = g();
  const double m = 1.0 + double(((r & 0x3FFFFF) << 1) | 1) * 0x1p-23;
  const int e = int((r >> 32) % 40) - 20;
  return float(std::ldexp(m, e));
}

// Odd multiples of 1.4 b * 2^-24 in (-0.4 b, b): never 0.
float skewed(std::mt19937_64& g, double b) {
  const auto k = double(2 * (g() >> 41) + 1);  // odd, in (0, 2^24)
  return float(-0.4 * b + k * (1.4 * b * 0x1p-24));
}

}  // namespace

int64_t chan_elems(const spec::Problem& p) {
  return (p.conv.bias ? p.conv.k : 0) + int64_t(p.num_params) * p.conv.k;
}

int64_t chan_index(const spec::Problem& p, int param_index) {
  if (param_index < 0 || param_index >= p.num_params) {
    throw InputError("per-channel parameter " + std::to_string(param_index) + " out of range (" +
                     std::to_string(p.num_params) + " declared)");
  }
  return (p.conv.bias ? p.conv.k : 0) + int64_t(param_index) * p.conv.k;
}

ProblemData make_problem_data(const spec::Problem& p, uint64_t seed, double threshold_fraction, XRange x_range,
                              Filters filters) {
  check_problem(p);
  if (!(threshold_fraction >= 0.0 && threshold_fraction <= 1.0)) {
    throw InputError("threshold_fraction must be in [0, 1], got " + std::to_string(threshold_fraction));
  }
  const spec::Conv& c = p.conv;
  const double bound = 1.0 / std::sqrt(double(c.c * c.r * c.s));
  ProblemData d;
  d.x.resize(size_t(c.input_elems()));
  d.w.resize(size_t(c.weight_elems()));
  d.chan.resize(size_t(chan_elems(p)));

  // x: its own stream per range, so the signed draw is not the unit draw shifted
  if (x_range == XRange::unit) {
    fill(d.x.data(), c.input_elems(), seed, kStreamX, unit_open);
  } else {
    fill(d.x.data(), c.input_elems(), seed, kStreamXSigned, [](std::mt19937_64& g) { return symmetric(g, 1.0); });
  }
  auto sym = [bound](std::mt19937_64& g) { return symmetric(g, bound); };
  fill(d.w.data(), c.weight_elems(), seed, kStreamW, sym);
  if (filters == Filters::positive) {
    for (float& v : d.w) v = std::fabs(v);  // odd multiples of b * 2^-23 in (0, b): never 0
  }
  if (c.bias) fill(d.chan.data(), c.k, seed, kStreamBias, sym);
  auto param = [](std::mt19937_64& g) { return symmetric(g, 1.0); };
  for (int i = 0; i < p.num_params; ++i) {
    fill(d.chan.data() + chan_index(p, i), c.k, seed, kStreamParam0 + uint64_t(i), param);
  }
  if (c.bias && threshold_fraction > 0.0) {
    const ChannelWeights w = channel_weights(p, d.w);
    const ChannelParams params = [&](int64_t k, double* out) {
      for (int i = 0; i < p.num_params; ++i) out[i] = d.chan[size_t(chan_index(p, i) + k)];
    };
    const std::span<float> bias(d.chan.data(), size_t(c.k));
    const auto placed =
        place_biases_on_thresholds(p, bias, w, p.num_params, params, threshold_fraction, x_mean(x_range));
    place_reduction_straddle(p, bias, placed, w, p.num_params, params, x_mean(x_range), x_var(x_range));
  }
  return d;
}

ProblemData make_verification_draw(const spec::Problem& p, uint64_t seed, int d) {
  const DrawPlan plan = verification_draw(d);
  return make_problem_data(p, seed + uint64_t(d), plan.threshold_fraction, plan.x, plan.filters);
}

ProblemData make_wide_range_data(const spec::Problem& p, uint64_t seed) {
  ProblemData d = make_problem_data(p, seed, 0.0);
  const double bound = 1.0 / std::sqrt(double(p.conv.c * p.conv.r * p.conv.s));
  fill(d.x.data(), p.conv.input_elems(), seed, kStreamX, wide);
  fill(d.w.data(), p.conv.weight_elems(), seed, kStreamW, [bound](std::mt19937_64& g) { return skewed(g, bound); });
  return d;
}

}  // namespace fusetune::reference
