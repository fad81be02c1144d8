#pragma once
// The TF32 rule on the host (docs/verification.md): a value carried with its error bound and
// variance through the bias, each op (with spec::op_info's facts) and a reduction, by the
// arithmetic of kernel_templates/ref_bounds.cuh that the GPU reference's kernels run too; and
// the comparison of an fp32 output with such a reference, the CPU twin of ref_compare.cu.
#include <cstdint>
#include <span>

#include "common/math_mode.hpp"
#include "kernel_templates/ref_bounds.cuh"
#include "reference/gpu_reference.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The TF32 rule's constants (ref_bounds.cuh): unit roundoffs of TF32, fp32, fp32 accumulation.
inline constexpr double kUnitTf32 = FT_U_TF32;
inline constexpr double kUnitFp32 = FT_U_FP32;
inline constexpr double kUnitAcc = FT_U_ACC;

// A reference value v, the bound e on |out - v| of a correct TF32 computation (+inf:
// ill-conditioned, unchecked) and the expected squared error var. In double; stored as fp32
// rounded up (store_bound).
struct Bounded {
  double v = 0.0, e = 0.0, var = 0.0;
};

// The conv output's bound and variance from y = sum x_i w_i, A = sum |x_i w_i|, B = sum (x_i w_i)^2
// over crs terms; under fp32 the variance is the fp32 rule's dot-product term (ft_var_dot_fp32).
[[nodiscard]] Bounded conv_bounded(double y, double a, double b, int64_t crs, MathMode math);
// x + bias, in place.
void add_bias_bounded(Bounded& x, double bias);
// One elementwise op, in place (apply_op for the value; chan_k as for apply_op).
void apply_op_bounded(const spec::Op& op, Bounded& x, const double* chan_k);
// The channel reduction of one pixel's K values (after the pre ops), in channel order; under
// fp32 the variances add (ref_bounds.cuh ft_reduce_bound_finish, strict).
[[nodiscard]] Bounded reduce_bounded(spec::ReduceKind kind, std::span<const Bounded> channels, MathMode math);

// A bound or variance as the reference stores it: fp32, never below the double (+inf for NaN).
[[nodiscard]] float store_bound(double d);

// The figures of `acc` (ref_compare.cu's sums over `count` elements) under `math`: rel_l2, and
// under tf32 the rel-L2 limit from the summed variances scaled by var_scale (l2_model.hpp).
[[nodiscard]] GpuErrorStats finish_compare(const ft_compare_acc& acc, uint64_t count, MathMode math,
                                           double var_scale = 1.0);

// out (count floats, NCHW) against ref under `math`'s rule, on the CPU, element by element as
// ref_compare.cu does. bound and var (count floats each): required under tf32; under fp32 var
// (the fp32 variances, conv_bounded(..., fp32) carried through) widens the tolerance by its
// dot-product term, and both may be null (KernelBench's 1e-4 + 1e-4 |ref| alone).
[[nodiscard]] GpuErrorStats compare_bounded(const float* out, const double* ref, const float* bound,
                                            const float* var, uint64_t count, MathMode math, double var_scale = 1.0);

}  // namespace fusetune::reference
