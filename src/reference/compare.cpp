#include "reference/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusetune::reference {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

ErrorStats compare(const float* out, const double* ref, int64_t count, double atol, double rtol) {
  ErrorStats st;
  double err2 = 0.0, ref2 = 0.0;
  auto mismatch = [&st](int64_t i) {
    ++st.mismatches;
    if (st.first_bad < 0) st.first_bad = i;
  };
  for (int64_t i = 0; i < count; ++i) {
    const auto o = double(out[i]);
    const double r = ref[i];
    if (std::isnan(o) || std::isnan(r)) {
      if (std::isnan(o) != std::isnan(r)) {
        mismatch(i);
        ++st.nan_mismatch;
      }
      continue;
    }
    if (std::isfinite(o) && std::isfinite(r)) {
      err2 += (o - r) * (o - r);
      ref2 += r * r;
    }
    if (o == r) continue;  // also equal infinities, whose difference would be NaN
    const double err = std::fabs(o - r);  // infinite when either side is
    st.max_abs = std::max(st.max_abs, err);
    if (std::fabs(r) >= kRelFloor) {
      // inf/inf would be NaN, which std::max would drop: an infinite error is infinitely relative.
      const double rel = std::isfinite(err) ? err / std::fabs(r) : kInf;
      st.max_rel = std::max(st.max_rel, rel);
    }
    // An infinite error never passes, even against an infinite tolerance (ref = inf).
    if (!std::isfinite(err) || !(err <= atol + rtol * std::fabs(r))) mismatch(i);
  }
  st.rel_l2 = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return st;
}

}  // namespace fusetune::reference
