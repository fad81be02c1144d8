#pragma once
// Seeded inputs for verification and timing: the same seed gives bit-identical buffers on
// every platform and compiler, so a failure seen on one machine replays on another.
#include <cstdint>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::reference {

// Host copies of a problem's inputs, always in logical order whatever the problem's
// layout words say (transposing is the kernels' job):
//   x     input (N, C, H, W)
//   w     filters (K, C, R, S)
//   chan  per-channel vectors, each K floats: [conv bias, if conv.bias][param 0][param 1]...
struct ProblemData {
  std::vector<float> x, w, chan;
};

// Offset of per-channel parameter `param_index` in ProblemData::chan (the bias, when the
// conv has one, occupies [0, K)). Throws InputError for an index outside [0, num_params).
[[nodiscard]] int64_t chan_index(const spec::Problem& p, int param_index);
// Total floats in ProblemData::chan.
[[nodiscard]] int64_t chan_elems(const spec::Problem& p);

// How x is drawn: like torch.rand (U(0, 1), KernelBench's draw), or signed, symmetric around 0
// (U(-1, 1): users' activations are signed; a kernel that mishandles signs -- a rounding that
// truncates toward zero, a lost abs, a reduction started from 0 -- shows only there).
enum class XRange { unit, symmetric };
// The bounds [lo, hi) of x under `r` (the device draw, GpuReference::fill_uniform, takes them).
[[nodiscard]] constexpr float x_lo(XRange r) { return r == XRange::unit ? 0.0f : -1.0f; }
[[nodiscard]] constexpr float x_hi(XRange) { return 1.0f; }
// Its mean and variance (U(0, 1): 1/2, 1/12; U(-1, 1): 0, 1/3), which place biases on thresholds.
[[nodiscard]] constexpr double x_mean(XRange r) { return r == XRange::unit ? 0.5 : 0.0; }
[[nodiscard]] constexpr double x_var(XRange r) { return r == XRange::unit ? 1.0 / 12.0 : 1.0 / 3.0; }

// How the filters are drawn: U(-b, b) like nn.Conv2d (symmetric), or U(0, b) (positive: every
// product of a U(0, 1) x has one sign, so a conv output is a coherent sum, |y| ~ sqrt(CRS) times
// the rounding noise's scale; an error that has a sign -- TF32 truncation -- grows with y there,
// while round-to-nearest noise does not: CPU emulation 6.5-18x the rel-L2 limit for truncation
// against 0.3-0.4 of it for rounding, reference_l2_model_test).
enum class Filters { symmetric, positive };

// The verification draws, one rule for the worker (worker/input_draws.cpp) and the CPU tests:
//   draw 0  x ~ U(0, 1) (torch.rand), filters symmetric, biases as drawn;
//   draw 1  x ~ U(-1, 1), filters symmetric, half the channels' biases on the epilogue's thresholds;
//   draw 2  x ~ U(0, 1), filters positive, half the biases on thresholds (every tune: the
//           default of protocol::SetupRequest::draws is 3);
//   later   alternating x ranges, symmetric filters, biases on thresholds.
// Biases and per-channel parameters are symmetric around 0 in every draw (below).
struct DrawPlan {
  XRange x = XRange::unit;
  double threshold_fraction = 0.0;
  Filters filters = Filters::symmetric;
};
[[nodiscard]] constexpr DrawPlan verification_draw(int d) {
  return {d % 2 == 0 ? XRange::unit : XRange::symmetric, d == 0 ? 0.0 : 0.5,
          d == 2 ? Filters::positive : Filters::symmetric};
}

// Draws the inputs like PyTorch initializes them, from std::mt19937_64 with our own
// mapping to floats (std::uniform_real_distribution differs between standard libraries):
//   x ~ U(0,1) like torch.rand (x_range unit) or U(-1,1) (symmetric); w, bias ~ U(-b,b),
//   b = 1/sqrt(C*R*S) like nn.Conv2d; params ~ U(-1,1). No value is ever zero (every draw is
//   an odd multiple of a power of 2).
// Each buffer has its own stream, so x depends only on (seed, input shape, x_range).
//
// threshold_fraction in [0,1]: that share of output channels (evenly spaced) gets its conv
// bias re-chosen so the channel's outputs straddle one of epilogue_thresholds() (cycled
// over the chosen channels): bias[k] = t - E[x] * sum(w[k]) (E[x] = 0.5 or 0), the mean of
// an interior output before bias. Conv inputs cannot be chosen
// to hit a threshold exactly; moving the bias puts the bulk of a channel's outputs around
// it, which is where a kernel that gets a comparison or a branch wrong shows it. Without
// a conv bias, or without thresholds, the draw is left as is.
[[nodiscard]] ProblemData make_problem_data(const spec::Problem& p, uint64_t seed,
                                            double threshold_fraction = 0.25, XRange x_range = XRange::unit,
                                            Filters filters = Filters::symmetric);
// Verification draw d of a problem: make_problem_data(p, seed + d, ...) under verification_draw(d).
[[nodiscard]] ProblemData make_verification_draw(const spec::Problem& p, uint64_t seed, int d);

// Inputs of large dynamic range whose sums cancel in part, for accuracy checks that tell TF32
// products from fp32 ones:
//   x = m * 2^e, m an odd multiple of 2^-23 in (1, 2), e uniform over [-20, 19]: one output
//     sums terms up to 2^40 apart;
//   w ~ U(-0.4 b, b), b as above: about 29% of the terms are negative, so sums cancel in part;
//   chan as make_problem_data's (no biases moved onto thresholds).
// Why these bounds (bench/accuracy/wide_range_sim.py, float64 against emulated products): exact
// fp32 products summed in fp32 pass the fp32 rule (1e-4 + 1e-4 |ref|) on such data with a 50x
// margin and so do 3xTF32 ones, while TF32 products fail it on ~20% of the outputs; with
// symmetric filters (U(-b, b)) or x of either sign, even fp32 sums fail it where 2^20-sized
// terms cancel, so no rule-abiding method could pass.
[[nodiscard]] ProblemData make_wide_range_data(const spec::Problem& p, uint64_t seed);

}  // namespace fusetune::reference
