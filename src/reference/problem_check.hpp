#pragma once
// The reference's precondition on a Problem. The spec parser rejects bad specs first; this
// catches Problems built by hand (tests, presets, other tools) before they become
// out-of-bounds reads or silently meaningless references.
#include "spec/problem.hpp"

namespace fusetune::reference {

// Throws InputError naming the first problem found: a non-positive extent, stride or
// dilation, a negative pad, an empty conv output, an op missing a required operand, a
// per-channel operand outside [0, num_params) or after the reduction.
void check_problem(const spec::Problem& p);

}  // namespace fusetune::reference
