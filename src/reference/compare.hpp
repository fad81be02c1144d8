#pragma once
// Error figures of a kernel's fp32 output against the float64 reference, and the pass/fail
// count under an |out - ref| <= atol + rtol*|ref| tolerance (KernelBench's allclose).
#include <cstdint>

namespace fusetune::reference {

// Relative error is only taken where |ref| >= kRelFloor. Conv outputs cross zero, and near
// a zero crossing any rounding gives an unbounded ratio that says nothing about the kernel
// (the absolute term of the tolerance governs those elements).
inline constexpr double kRelFloor = 1e-6;

struct ErrorStats {
  double max_abs = 0.0;       // max |out - ref|, over elements that are not NaN in both
  double max_rel = 0.0;       // max |out - ref| / |ref|, over elements with |ref| >= kRelFloor
  double rel_l2 = 0.0;        // sqrt(sum (out-ref)^2 / sum ref^2), over elements finite in both
  int64_t mismatches = 0;     // elements failing the tolerance (see compare)
  int64_t first_bad = -1;     // index of the first mismatch, -1 if none
  int64_t nan_mismatch = 0;   // mismatches where exactly one of out, ref is NaN

  [[nodiscard]] bool ok() const { return mismatches == 0; }
};

// Element i matches when:
//   - out and ref are both NaN (an op like log(-1) makes NaN legitimately), or
//   - out == ref (this covers equal infinities), or
//   - both are finite and |out - ref| <= atol + rtol*|ref|.
// Everything else is a mismatch: NaN on one side only (an output the kernel never wrote
// keeps its NaN sentinel), an infinity against anything but the same infinity.
// An infinite error (one side infinite) makes max_abs and max_rel infinite; rel_l2 leaves
// such elements out, since one of them would swamp the whole sum; mismatches still count
// them. rel_l2 is sqrt(sum err^2) when sum ref^2 is 0 (an all-zero reference).
[[nodiscard]] ErrorStats compare(const float* out, const double* ref, int64_t count, double atol,
                                 double rtol);

}  // namespace fusetune::reference
