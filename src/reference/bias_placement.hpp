#pragma once
// Biases moved onto an epilogue's thresholds (issue 41): random main-operator outputs rarely
// land where an epilogue changes branch (epilogue_thresholds), so a verification draw moves the
// bias of a share of output channels until that channel's outputs straddle one. One rule for the
// conv2d chains' draws (problem_data.cpp) and version 2's (model_data.cpp).
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::reference {

// Per output channel, over the weights one interior output of that channel adds up: their sum
// (E[y - bias] = E[x] sum) and the sum of their squares (Var[y] = Var[x] sq).
struct ChannelWeights {
  std::vector<double> sum, sq;
};

// The main operator's weights (PyTorch's layout, model_data.hpp) summed per output channel (dim 1):
// a linear's rows of W (N, K); a conv's filter (K, C/g, T, R, S), one run per channel; a
// transposed conv's weight[c][k % (K/g)] over its group's c (C, K/g, T, R, S), scaled by
// 1/(product of strides), the share of a filter's taps an interior output adds. No matmul (its B
// is an input, and it has no bias to place).
[[nodiscard]] ChannelWeights channel_weights(const spec::Problem& problem, std::span<const float> weight);

// The chain's per-channel parameters at channel k: fills out[0, num_params).
using ChannelParams = std::function<void(int64_t k, double* out)>;

// Breakpoints farther out than this are not used to place biases: one mapped back through exp or
// a tiny scale can be huge, and a bias there would only test fp32 overflow, not the comparison.
inline constexpr double kMaxThreshold = 1e6;

// `chain` (its pre, reduce and post: the chain form) after a main operator whose channel k has
// weights w.sum[k], w.sq[k] and bias bias[k]: an evenly spaced share `fraction` of the channels
// (at least one when fraction > 0) gets bias[k] = t - x_mean * w.sum[k], t one of the chain's
// thresholds at that channel's parameters (cycled over the chosen channels). Never 0 (2^-20
// instead). Returns which channels moved.
std::vector<bool> place_biases_on_thresholds(const spec::Problem& chain, std::span<float> bias,
                                             const ChannelWeights& w, int num_params, const ChannelParams& params,
                                             double fraction, double x_mean);

// For a min (max) channel reduction: every channel not `placed` gets a bias that puts its outputs
// m standard deviations above (below) the point the chain maps to 0, with m such that all K
// channels of a pixel are above (below) it about half the time if they were independent
// (Phi(m)^K = 1/2). A reduction started from 0 instead of +inf (-inf) is then wrong at about half
// the pixels instead of nowhere (a minimum over 128 centred channels is negative everywhere).
void place_reduction_straddle(const spec::Problem& chain, std::span<float> bias, const std::vector<bool>& placed,
                              const ChannelWeights& w, int num_params, const ChannelParams& params, double x_mean,
                              double x_var);

}  // namespace fusetune::reference
