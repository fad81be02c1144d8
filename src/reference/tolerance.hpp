#pragma once
// The verdict on one comparison: the one rule every candidate is held to, baselines included
// (docs/numerics.md). GPU-free, so the rule is unit-tested.
#include <string>

#include "common/math_mode.hpp"
#include "reference/gpu_reference.hpp"

namespace fusetune::reference {

struct Verdict {
  bool ok = true;
  std::string reason;  // one line when !ok: which criterion failed, with the figures
};

// fp32: every element within 1e-4 + 1e-4*|ref| + 6 sd of a correct fp32 computation's rounding
// (the mismatches ref_compare.cu counted under that rule). tf32: every element within its derived bound,
// and rel_l2 <= rel_l2_limit. Either way an output that is NaN/inf where the reference is
// finite (an element never written, or an overflow) fails first, naming the count.
[[nodiscard]] Verdict judge(const GpuErrorStats& e, MathMode math);

}  // namespace fusetune::reference
