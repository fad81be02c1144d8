// make_problem_data (determinism, ranges, no zeros, the chan layout, bias placement, the signed
// draw) and
// epilogue_thresholds. Problems are built by hand: the spec parser is not a dependency.
#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "reference/problem_data.hpp"
#include "reference/thresholds.hpp"
#include "spec_builders.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;

using spec_builders::param;
using spec_builders::scalar;

spec::Problem small_problem(bool bias, int num_params) {
  spec::Problem p;
  p.conv.n = 2;
  p.conv.c = 3;
  p.conv.h = 9;
  p.conv.w = 7;
  p.conv.k = 5;
  p.conv.r = 3;
  p.conv.s = 3;
  p.conv.bias = bias;
  p.num_params = num_params;
  for (int i = 0; i < num_params; ++i) p.pre.push_back({OpKind::add, {param(i)}});
  return p;
}

TEST(ProblemData, SizesAndChanLayout) {
  const spec::Problem p = small_problem(true, 2);
  const ProblemData d = make_problem_data(p, 1);
  EXPECT_EQ(d.x.size(), 2u * 3 * 9 * 7);
  EXPECT_EQ(d.w.size(), 5u * 3 * 3 * 3);
  EXPECT_EQ(d.chan.size(), 3u * 5);
  EXPECT_EQ(chan_elems(p), 15);
  EXPECT_EQ(chan_index(p, 0), 5);  // after the bias
  EXPECT_EQ(chan_index(p, 1), 10);
  const spec::Problem nb = small_problem(false, 2);
  EXPECT_EQ(chan_index(nb, 0), 0);
  EXPECT_EQ(chan_index(nb, 1), 5);
  EXPECT_EQ(chan_elems(nb), 10);
  EXPECT_THROW((void)chan_index(p, 2), InputError);
  EXPECT_THROW((void)chan_index(p, -1), InputError);
}

TEST(ProblemData, DeterministicForASeedAndDifferentAcrossSeeds) {
  const spec::Problem p = small_problem(true, 1);
  const ProblemData a = make_problem_data(p, 42), b = make_problem_data(p, 42);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.w, b.w);
  EXPECT_EQ(a.chan, b.chan);
  const ProblemData c = make_problem_data(p, 43);
  EXPECT_NE(a.x, c.x);
  EXPECT_NE(a.w, c.w);
  EXPECT_NE(a.chan, c.chan);
  // Buffers draw from separate streams: x does not depend on the filters or the epilogue.
  spec::Problem other = small_problem(false, 0);
  other.conv.k = 11;
  EXPECT_EQ(make_problem_data(other, 42).x, a.x);
}

TEST(ProblemData, PinnedValuesAcrossPlatforms) {
  // The generator is std::mt19937_64 (fully specified) plus our own mapping, so these values
  // are the same everywhere; a change here breaks replaying a stored seed.
  const ProblemData d = make_problem_data(small_problem(true, 0), 7, 0.0);
  EXPECT_EQ(d.x[0], 0x1.a78e86p-1f);
  EXPECT_EQ(d.x[1], 0x1.07b4a6p-1f);
  EXPECT_EQ(d.x.back(), 0x1.b070e4p-2f);
  EXPECT_EQ(d.w[0], 0x1.3436cap-3f);
  EXPECT_EQ(d.chan[0], 0x1.1e60dap-5f);  // bias 0
  // Every x is an odd multiple of 2^-24.
  for (float v : d.x) {
    const double scaled = double(v) * 0x1p24;
    EXPECT_EQ(std::fmod(scaled, 2.0), 1.0) << v;
  }
}

TEST(ProblemData, LargeBuffersAreChunkedDeterministically) {
  // 1.1M inputs span two generator chunks, filled on different threads.
  spec::Problem p;
  p.conv.h = 1100;
  p.conv.w = 1000;
  const ProblemData a = make_problem_data(p, 9), b = make_problem_data(p, 9);
  EXPECT_EQ(a.x, b.x);
  const size_t chunk = size_t(1) << 20;
  // The second chunk is its own stream, not a repeat of the first.
  EXPECT_FALSE(std::equal(a.x.begin(), a.x.begin() + 1000, a.x.begin() + chunk));
}

TEST(ProblemData, RangesAndNoZeros) {
  spec::Problem p = small_problem(true, 2);
  p.conv.k = 64;
  p.conv.c = 16;  // b = 1/sqrt(16*9) = 1/12
  const ProblemData d = make_problem_data(p, 3, 0.0);
  const double b = 1.0 / 12.0;
  for (float v : d.x) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  for (float v : d.w) {
    EXPECT_NE(v, 0.0f);
    EXPECT_LT(std::fabs(double(v)), b);
  }
  for (int64_t k = 0; k < p.conv.k; ++k) EXPECT_LT(std::fabs(double(d.chan[size_t(k)])), b);
  for (size_t i = size_t(p.conv.k); i < d.chan.size(); ++i) {
    EXPECT_NE(d.chan[i], 0.0f);
    EXPECT_LT(std::fabs(d.chan[i]), 1.0f);
  }
  // Uniform draws: means near the middle of their ranges, both signs present.
  double mx = 0.0;
  for (float v : d.x) mx += double(v);
  EXPECT_NEAR(mx / double(d.x.size()), 0.5, 0.02);
  EXPECT_TRUE(std::any_of(d.w.begin(), d.w.end(), [](float v) { return v < 0; }));
  EXPECT_TRUE(std::any_of(d.w.begin(), d.w.end(), [](float v) { return v > 0; }));
  EXPECT_EQ(std::set<float>(d.x.begin(), d.x.end()).size() > d.x.size() * 9 / 10, true);
}

// The accuracy tests' draw: x over every binade of [2^-20, 2^20), positive; filters in
// (-0.4 b, b), about 29% negative, never 0; the per-channel vectors as the ordinary draw's.
TEST(ProblemData, WideRangeDrawSpansItsBinadesAndCancelsInPart) {
  spec::Problem p = small_problem(true, 1);
  p.conv.k = 64;
  p.conv.c = 16;  // b = 1/12
  const ProblemData d = make_wide_range_data(p, 5);
  std::set<int> binades;
  for (float v : d.x) {
    ASSERT_GE(v, 0x1p-20f);
    ASSERT_LT(v, 0x1p20f);
    int e = 0;
    std::frexp(v, &e);
    binades.insert(e - 1);
  }
  EXPECT_EQ(binades.size(), 40u);  // 2^-20 .. 2^19, every one
  const double b = 1.0 / 12.0;
  size_t negative = 0;
  for (float v : d.w) {
    ASSERT_NE(v, 0.0f);
    ASSERT_GT(double(v), -0.4 * b);
    ASSERT_LT(double(v), b);
    negative += v < 0;
  }
  EXPECT_NEAR(double(negative) / double(d.w.size()), 0.4 / 1.4, 0.03);
  EXPECT_EQ(d.chan, make_problem_data(p, 5, 0.0).chan);
  const ProblemData again = make_wide_range_data(p, 5);
  EXPECT_EQ(again.x, d.x);
  EXPECT_EQ(again.w, d.w);
  EXPECT_NE(make_wide_range_data(p, 6).x, d.x);
}

TEST(ProblemData, BiasesMovedOntoThresholds) {
  spec::Problem p = small_problem(true, 0);
  p.conv.k = 8;
  p.pre = {{OpKind::min, {scalar(0.5)}}};
  const ProblemData plain = make_problem_data(p, 5, 0.0);
  const ProblemData placed = make_problem_data(p, 5, 0.25);  // 2 of 8 channels: 0 and 4
  EXPECT_EQ(plain.x, placed.x);
  EXPECT_EQ(plain.w, placed.w);
  const int64_t crs = p.conv.c * p.conv.r * p.conv.s;
  for (int64_t k = 0; k < p.conv.k; ++k) {
    if (k == 0 || k == 4) {
      double wsum = 0.0;
      for (int64_t e = 0; e < crs; ++e) wsum += double(placed.w[size_t(k * crs + e)]);
      EXPECT_FLOAT_EQ(placed.chan[size_t(k)], float(0.5 - 0.5 * wsum)) << k;
    } else {
      EXPECT_EQ(placed.chan[size_t(k)], plain.chan[size_t(k)]) << k;
    }
  }
  EXPECT_THROW((void)make_problem_data(p, 5, 1.5), InputError);
}

// Issue 41: a signed draw (x symmetric around 0, never 0) next to the torch.rand-like one, the
// same weights and per-channel vectors (symmetric in both), reproducible; biases placed on a
// threshold t are t - E[x] * sum(w[k]), E[x] = 0 for the signed draw.
TEST(ProblemData, SignedDrawIsSymmetricReproducibleAndPlacesBiasesForItsMean) {
  spec::Problem p = small_problem(true, 1);
  p.conv.n = 64;
  p.conv.k = 8;
  p.pre = {{OpKind::min, {scalar(0.5)}}, {OpKind::add, {param(0)}}};
  const ProblemData u = make_problem_data(p, 5, 0.25, XRange::unit);
  const ProblemData s = make_problem_data(p, 5, 0.25, XRange::symmetric);
  EXPECT_EQ(s.x, make_problem_data(p, 5, 0.25, XRange::symmetric).x);
  EXPECT_NE(s.x, make_problem_data(p, 6, 0.25, XRange::symmetric).x);
  EXPECT_EQ(u.w, s.w);
  double sum = 0.0;
  size_t negative = 0;
  for (float v : s.x) {
    EXPECT_GT(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    EXPECT_NE(v, 0.0f);
    sum += double(v);
    negative += v < 0.0f;
  }
  const auto n = double(s.x.size());
  EXPECT_NEAR(sum / n, 0.0, 4.0 / std::sqrt(3.0 * n));  // 4 standard errors of U(-1, 1)'s mean
  EXPECT_NEAR(double(negative) / n, 0.5, 0.05);
  for (float v : u.x) EXPECT_GT(v, 0.0f);
  size_t w_negative = 0, param_negative = 0;
  for (float v : s.w) w_negative += v < 0.0f;
  for (int64_t k = 0; k < p.conv.k; ++k) param_negative += s.chan[size_t(chan_index(p, 0) + k)] < 0.0f;
  EXPECT_GT(w_negative, s.w.size() / 4);
  EXPECT_GT(param_negative, 0u);
  EXPECT_LT(param_negative, size_t(p.conv.k));
  const int64_t crs = p.conv.c * p.conv.r * p.conv.s;
  for (int64_t k : {0, 4}) {
    double wsum = 0.0;
    for (int64_t e = 0; e < crs; ++e) wsum += double(s.w[size_t(k * crs + e)]);
    EXPECT_FLOAT_EQ(u.chan[size_t(k)], float(0.5 - 0.5 * wsum)) << k;
    EXPECT_FLOAT_EQ(s.chan[size_t(k)], 0.5f) << k;
  }
}

// The worker's draws (worker/input_draws.cpp) follow verification_draw: 0 like torch.rand with
// the biases as drawn, 1 signed with half the biases on thresholds, then alternating.
TEST(ProblemData, VerificationDrawsAlternateRandAndSigned) {
  EXPECT_EQ(verification_draw(0).x, XRange::unit);
  EXPECT_EQ(verification_draw(0).threshold_fraction, 0.0);
  EXPECT_EQ(verification_draw(1).x, XRange::symmetric);
  EXPECT_EQ(verification_draw(1).threshold_fraction, 0.5);
  EXPECT_EQ(verification_draw(2).x, XRange::unit);
  EXPECT_EQ(verification_draw(2).threshold_fraction, 0.5);
  EXPECT_EQ(x_lo(XRange::unit), 0.0f);
  EXPECT_EQ(x_lo(XRange::symmetric), -1.0f);
  EXPECT_EQ(x_hi(XRange::symmetric), 1.0f);
  const spec::Problem p = small_problem(true, 1);
  EXPECT_EQ(make_verification_draw(p, 7, 1).x, make_problem_data(p, 8, 0.5, XRange::symmetric).x);
  EXPECT_EQ(make_verification_draw(p, 7, 0).chan, make_problem_data(p, 7, 0.0).chan);
}

TEST(ProblemData, RejectsBadShapes) {
  spec::Problem p = small_problem(true, 0);
  p.conv.r = 12;  // window taller than the input: empty output
  EXPECT_THROW((void)make_problem_data(p, 1), InputError);
  p = small_problem(true, 0);
  p.pre.push_back({OpKind::add, {param(0)}});  // param 0 not declared
  EXPECT_THROW((void)make_problem_data(p, 1), InputError);
}

// --- epilogue_thresholds --------------------------------------------------------------

spec::Problem with_pre(std::vector<spec::Op> pre, int num_params = 0) {
  spec::Problem p;
  p.pre = std::move(pre);
  p.num_params = num_params;
  return p;
}

TEST(Thresholds, BriefExamples) {
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::min, {scalar(0.5)}},
                                          {OpKind::add, {param(0)}},
                                          {OpKind::mul, {scalar(2.0)}}},
                                         1)),
            std::vector<double>{0.5});
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::mul, {scalar(2.0)}}, {OpKind::min, {scalar(0.5)}}})),
            std::vector<double>{0.25});
}

TEST(Thresholds, ThroughInvertibleOps) {
  // (x - 1) * 0.5 -> relu: kink at 0 maps back to x = 1.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::sub, {scalar(1.0)}},
                                          {OpKind::mul, {scalar(0.5)}},
                                          {OpKind::relu, {}}})),
            std::vector<double>{1.0});
  // neg then clamp(-1, 2): x in {-2, 1}.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::neg, {}}, {OpKind::clamp, {scalar(-1.0), scalar(2.0)}}})),
            (std::vector<double>{-2.0, 1.0}));
  // exp then max(1): x = log 1 = 0.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::exp, {}}, {OpKind::max, {scalar(1.0)}}})),
            std::vector<double>{0.0});
  // square then min(4): both signs.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::square, {}}, {OpKind::min, {scalar(4.0)}}})),
            (std::vector<double>{-2.0, 2.0}));
  // hardswish's own corners.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::hardswish, {}}})), (std::vector<double>{-3.0, 3.0}));
}

TEST(Thresholds, ThroughActivationsPositiveBranch) {
  // gelu then min(0.8413447460685429): gelu(1) is that value, so x = 1.
  const std::vector<double> t =
      epilogue_thresholds(with_pre({{OpKind::gelu, {}}, {OpKind::min, {scalar(0.8413447460685429)}}}));
  ASSERT_EQ(t.size(), 1u);
  // The fp32-rounded 0.84134477 lies a hair above gelu(1).
  EXPECT_NEAR(t[0], 1.0, 1e-6);
}

TEST(Thresholds, UnreachableAndPerChannelDropOut) {
  // min(0.5) never outputs 0.7, so max(0.7)'s breakpoint has no preimage; min's own stays.
  EXPECT_EQ(epilogue_thresholds(with_pre({{OpKind::min, {scalar(0.5)}}, {OpKind::max, {scalar(0.7)}}})),
            std::vector<double>{0.5});
  // Through add(param[0]) only with a channel's values.
  const spec::Problem p = with_pre({{OpKind::add, {param(0)}}, {OpKind::min, {scalar(0.5)}}}, 1);
  EXPECT_TRUE(epilogue_thresholds(p).empty());
  const double chan[] = {0.25};
  EXPECT_EQ(epilogue_thresholds(p, chan), std::vector<double>{0.25});
  // Domain edges are not breakpoints.
  EXPECT_TRUE(epilogue_thresholds(with_pre({{OpKind::log, {}}, {OpKind::sqrt, {}}})).empty());
}

TEST(Thresholds, PostReductionBreakpoints) {
  spec::Problem p = with_pre({{OpKind::mul, {scalar(2.0)}}});
  p.reduce = spec::ReduceKind::min;
  p.post = {{OpKind::relu, {}}};
  EXPECT_EQ(epilogue_thresholds(p), std::vector<double>{0.0});
  p.post = {{OpKind::min, {scalar(1.0)}}};
  EXPECT_EQ(epilogue_thresholds(p), std::vector<double>{0.5});
  p.reduce = spec::ReduceKind::sum;
  EXPECT_TRUE(epilogue_thresholds(p).empty());
}

}  // namespace
}  // namespace fusetune::reference
