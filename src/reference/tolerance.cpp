#include "reference/tolerance.hpp"

#include <fmt/format.h>

namespace fusetune::reference {
namespace {

// " first at NCHW index I" when the comparison found one.
std::string first_at(const GpuErrorStats& e) {
  return e.first_bad == GpuErrorStats::kNone ? std::string() : fmt::format(", first at NCHW index {}", e.first_bad);
}

}  // namespace

Verdict judge(const GpuErrorStats& e, MathMode math) {
  if (e.nonfinite > 0) {
    return {false, fmt::format("{} of {} elements NaN/inf where the reference is finite (unwritten or overflow){}",
                               e.nonfinite, e.count, first_at(e))};
  }
  switch (math) {
    case MathMode::fp32:
      if (e.mismatches > 0) {
        return {false, fmt::format("{} of {} elements outside 1e-4 + 1e-4*|ref| (max abs {:.3g}, max rel {:.3g}, "
                                   "worst {:.3g}x the tolerance){}",
                                   e.mismatches, e.count, e.max_abs, e.max_rel, e.worst_ratio, first_at(e))};
      }
      return {};
    case MathMode::tf32:
      if (e.mismatches > 0) {
        return {false, fmt::format("{} of {} elements outside the TF32 bound (worst {:.3g}x the bound, max abs {:.3g}){}",
                                   e.mismatches, e.count, e.worst_ratio, e.max_abs, first_at(e))};
      }
      // NaN > limit is false: a NaN figure is a bug upstream, but not a pass either.
      if (!(e.rel_l2 <= e.rel_l2_limit)) {
        return {false, fmt::format("relative L2 error {:.3g} > the TF32 limit {:.3g} ({:.2f}x; {} elements checked, "
                                   "{} unchecked)",
                                   e.rel_l2, e.rel_l2_limit, e.rel_l2_limit > 0 ? e.rel_l2 / e.rel_l2_limit : 0.0,
                                   e.count - e.unchecked, e.unchecked)};
      }
      return {};
  }
  return {false, "unknown math mode"};
}

}  // namespace fusetune::reference
