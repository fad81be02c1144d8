// Compares a kernel's fp32 output with the float64 reference on the GPU, for outputs too big
// to copy to the host and scan there. The rule is ref_bounds.cuh's ft_compare_element, which
// the CPU twin (src/reference/bounds.cpp compare_bounded) runs too, so a verdict does not depend
// on where it was computed:
//   use_bounds 0 (fp32): |out - ref| <= 1e-4 + 1e-4*|ref|;
//   use_bounds 2 (fp32 with the reference's fp32 variances): + 6 sqrt(var[i]);
//   use_bounds 1 (tf32): |out - ref| <= bound[i]; an infinite bound leaves the element unchecked.
// Both: NaN in both matches, NaN on one side is a mismatch, equal values (infinities too) match.
// Figures: max_abs over elements not NaN in both (infinite when one side is infinite), max_rel
// where |ref| >= 1e-6, worst_ratio = max |out - ref| / tolerance, the L2 sums (and under tf32 the
// sum of the variances) over checked elements finite in both, and how many there were.
//
// Layout: ref (and bound, var) are NCHW (N, C_out, P*Q); out is NCHW too, or NHWC when out_nhwc
// (logical (n, c, pq) at out[(n*PQ + pq)*C_out + c]). Indices, first_bad included, are NCHW.
//
// Reduction: per-thread partials, then per-warp shuffles, then per-block through shared
// memory, then one set of atomics per block. Max of non-negative doubles uses atomicMax on
// their bit patterns (ordered like the values); the host zeroes *stats and sets first_bad
// to ~0 (ft_compare_init) before the launch.
//
// The host mirror of ft_stats is in src/reference/gpu_reference.cpp (static_asserts check it).
#ifndef FT_REF_BOUNDS_CUH
#include "ref_bounds.cuh"  // NVRTC gets it pasted in front instead (gpu_reference.cpp)
#endif

struct ft_stats {
  unsigned long long max_abs_bits;
  unsigned long long max_rel_bits;
  unsigned long long worst_ratio_bits;
  double sum_err2;
  double sum_ref2;
  double sum_var;
  unsigned long long mismatches;
  unsigned long long nonfinite;
  unsigned long long unchecked;
  unsigned long long n_l2;
  unsigned long long first_bad;  // ~0ull when none
};

#ifndef FT_COMPARE_THREADS
#define FT_COMPARE_THREADS 256
#endif
#define FT_COMPARE_WARPS (FT_COMPARE_THREADS / 32)

extern "C" __global__ void ft_compare_init(ft_stats* stats) {
  stats->max_abs_bits = 0;  // +0.0
  stats->max_rel_bits = 0;
  stats->worst_ratio_bits = 0;
  stats->sum_err2 = 0.0;
  stats->sum_ref2 = 0.0;
  stats->sum_var = 0.0;
  stats->mismatches = 0;
  stats->nonfinite = 0;
  stats->unchecked = 0;
  stats->n_l2 = 0;
  stats->first_bad = ~0ull;
}

__device__ __forceinline__ ft_compare_acc ft_shfl_down(const ft_compare_acc& a, int offset) {
  ft_compare_acc b;
  b.max_abs = __shfl_down_sync(0xffffffffu, a.max_abs, offset);
  b.max_rel = __shfl_down_sync(0xffffffffu, a.max_rel, offset);
  b.worst_ratio = __shfl_down_sync(0xffffffffu, a.worst_ratio, offset);
  b.err2 = __shfl_down_sync(0xffffffffu, a.err2, offset);
  b.ref2 = __shfl_down_sync(0xffffffffu, a.ref2, offset);
  b.var_sum = __shfl_down_sync(0xffffffffu, a.var_sum, offset);
  b.mismatches = __shfl_down_sync(0xffffffffu, a.mismatches, offset);
  b.nonfinite = __shfl_down_sync(0xffffffffu, a.nonfinite, offset);
  b.unchecked = __shfl_down_sync(0xffffffffu, a.unchecked, offset);
  b.n_l2 = __shfl_down_sync(0xffffffffu, a.n_l2, offset);
  b.first_bad = __shfl_down_sync(0xffffffffu, a.first_bad, offset);
  return b;
}

__device__ __forceinline__ void ft_warp_reduce(ft_compare_acc& a) {
  for (int offset = 16; offset > 0; offset /= 2) ft_compare_combine(a, ft_shfl_down(a, offset));
}

// bound is read under use_bounds 1, var under 1 and 2 (pass 0 for what is not read).
extern "C" __global__ void __launch_bounds__(FT_COMPARE_THREADS)
ft_compare(const float* __restrict__ out, const double* __restrict__ ref, const float* __restrict__ bound,
           const float* __restrict__ var, unsigned long long count, int out_nhwc, int C_out, int PQ, int use_bounds,
           ft_stats* stats) {
  ft_compare_acc t = ft_compare_acc_zero();
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const long long CPQ = (long long)C_out * PQ;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    long long oi = (long long)i;
    if (out_nhwc) {
      const long long n = oi / CPQ;
      const long long rest = oi - n * CPQ;
      const long long c = rest / PQ;
      const long long pq = rest - c * PQ;
      oi = (n * PQ + pq) * C_out + c;
    }
    // i grows, so the thread's first mismatch is its smallest index.
    ft_compare_element(t, i, (double)out[oi], ref[i], use_bounds, use_bounds == 1 ? (double)bound[i] : 0.0,
                       use_bounds ? (double)var[i] : 0.0);
  }

  __shared__ ft_compare_acc warp_partials[FT_COMPARE_WARPS];
  ft_warp_reduce(t);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_partials[warp] = t;
  __syncthreads();
  if (warp != 0) return;
  t = lane < FT_COMPARE_WARPS ? warp_partials[lane] : ft_compare_acc_zero();
  ft_warp_reduce(t);
  if (lane != 0) return;
  // Atomics only where the block found something: most blocks of a passing run add nothing.
  if (t.max_abs > 0.0) atomicMax(&stats->max_abs_bits, (unsigned long long)__double_as_longlong(t.max_abs));
  if (t.max_rel > 0.0) atomicMax(&stats->max_rel_bits, (unsigned long long)__double_as_longlong(t.max_rel));
  if (t.worst_ratio > 0.0) {
    atomicMax(&stats->worst_ratio_bits, (unsigned long long)__double_as_longlong(t.worst_ratio));
  }
  if (t.err2 != 0.0) atomicAdd(&stats->sum_err2, t.err2);
  atomicAdd(&stats->sum_ref2, t.ref2);
  if (t.var_sum != 0.0) atomicAdd(&stats->sum_var, t.var_sum);
  if (t.mismatches != 0) atomicAdd(&stats->mismatches, t.mismatches);
  if (t.nonfinite != 0) atomicAdd(&stats->nonfinite, t.nonfinite);
  if (t.unchecked != 0) atomicAdd(&stats->unchecked, t.unchecked);
  if (t.n_l2 != 0) atomicAdd(&stats->n_l2, t.n_l2);
  if (t.first_bad != ~0ull) atomicMin(&stats->first_bad, t.first_bad);
}
