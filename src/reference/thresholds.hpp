#pragma once
// Where an epilogue changes branch (min/max/clamp corners, relu's kink, softplus's switch to
// linear), expressed as values of the conv output (conv + bias, the epilogue's input). A
// kernel that compares in the wrong order, rounds a constant differently or picks the wrong
// branch is only caught by outputs near these points, and random conv outputs rarely land
// there; make_problem_data uses this list to put conv biases on them.
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::reference {

// Breakpoints of every op, mapped back to conv-output space through the ops before it
// (best effort; sorted, unique, finite):
//   min(0.5) | add(param[k]) | mul(2)  ->  {0.5}
//   mul(2) | min(0.5)                   ->  {0.25}
// Mapped exactly through invertible ops (add, mul, exp, tanh, ...), through min/max/clamp/
// relu where the value lies in their unclamped range, through abs and square to both signs,
// and through gelu/silu/mish/hardswish on their increasing, positive branch. A value an op
// cannot reach drops out (min(0.5) | max(0.7) has no 0.7). Post-reduction breakpoints map
// through reduce_min/reduce_max unchanged (the result is one channel's value) and through
// reduce_mean unchanged (all channels near t); reduce_sum's are skipped.
// Domain edges (log, sqrt at 0; div, rdiv poles) are not breakpoints: there the output is
// ill-conditioned and a verification placed there tests conditioning, not the kernel.
// chan_k: per-channel parameters at one channel, as for apply_op; when null, breakpoints
// that would have to pass through a per-channel operand are skipped.
[[nodiscard]] std::vector<double> epilogue_thresholds(const spec::Problem& p,
                                                      const double* chan_k = nullptr);

// For a min/max channel reduction: the conv outputs (conv + bias) the pre-reduction chain maps
// to 0, where a reduction started from 0 instead of its identity (+inf, -inf) starts to differ
// from the right one. Empty for other problems or where the chain cannot be inverted there.
[[nodiscard]] std::vector<double> reduction_start_points(const spec::Problem& p, const double* chan_k = nullptr);

}  // namespace fusetune::reference
