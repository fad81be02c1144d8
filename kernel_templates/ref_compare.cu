// Compares a kernel's fp32 output with the float64 reference on the GPU, for outputs too big
// to copy to the host and scan there. The rules are those of src/reference/compare.cpp (the
// CPU twin), so a verdict does not depend on where it was computed. Element i matches when
//   - out and ref are both NaN, or
//   - out == ref (this covers equal infinities), or
//   - both are finite and |out - ref| <= atol + rtol*|ref|;
// everything else is a mismatch. Figures: max_abs over elements not NaN in both (infinite
// when one side is infinite), max_rel where |ref| >= 1e-6, the L2 sums over elements finite
// in both. `nonfinite` counts outputs that are NaN or Inf where the reference is finite: an
// unwritten NaN sentinel, or an overflow.
//
// Layout: ref is NCHW (N, C_out, P*Q); out is NCHW too, or NHWC when out_nhwc (logical
// (n, c, pq) at out[(n*PQ + pq)*C_out + c]). Indices, first_bad included, are NCHW indices.
//
// Reduction: per-thread partials, then per-warp shuffles, then per-block through shared
// memory, then one set of atomics per block. Max of non-negative doubles uses atomicMax on
// their bit patterns (ordered like the values); the host zeroes *stats and sets first_bad
// to ~0 (ft_compare_init) before the launch.
//
// The host mirror of ft_stats is in src/reference/gpu_reference.cpp (static_asserts check it).
struct ft_stats {
  unsigned long long max_abs_bits;
  unsigned long long max_rel_bits;
  double sum_err2;
  double sum_ref2;
  unsigned long long mismatches;
  unsigned long long nonfinite;
  unsigned long long first_bad;  // ~0ull when none
};

#ifndef FT_COMPARE_THREADS
#define FT_COMPARE_THREADS 256
#endif
#define FT_COMPARE_WARPS (FT_COMPARE_THREADS / 32)

extern "C" __global__ void ft_compare_init(ft_stats* stats) {
  stats->max_abs_bits = 0;  // +0.0
  stats->max_rel_bits = 0;
  stats->sum_err2 = 0.0;
  stats->sum_ref2 = 0.0;
  stats->mismatches = 0;
  stats->nonfinite = 0;
  stats->first_bad = ~0ull;
}

struct ft_partial {
  double max_abs, max_rel, err2, ref2;
  unsigned long long mismatches, nonfinite, first_bad;
};

__device__ __forceinline__ void ft_combine(ft_partial& a, const ft_partial& b) {
  a.max_abs = fmax(a.max_abs, b.max_abs);  // never NaN: see ft_compare
  a.max_rel = fmax(a.max_rel, b.max_rel);
  a.err2 += b.err2;
  a.ref2 += b.ref2;
  a.mismatches += b.mismatches;
  a.nonfinite += b.nonfinite;
  a.first_bad = min(a.first_bad, b.first_bad);
}

__device__ __forceinline__ ft_partial ft_shfl_down(const ft_partial& a, int offset) {
  ft_partial b;
  b.max_abs = __shfl_down_sync(0xffffffffu, a.max_abs, offset);
  b.max_rel = __shfl_down_sync(0xffffffffu, a.max_rel, offset);
  b.err2 = __shfl_down_sync(0xffffffffu, a.err2, offset);
  b.ref2 = __shfl_down_sync(0xffffffffu, a.ref2, offset);
  b.mismatches = __shfl_down_sync(0xffffffffu, a.mismatches, offset);
  b.nonfinite = __shfl_down_sync(0xffffffffu, a.nonfinite, offset);
  b.first_bad = __shfl_down_sync(0xffffffffu, a.first_bad, offset);
  return b;
}

__device__ __forceinline__ void ft_warp_reduce(ft_partial& a) {
  for (int offset = 16; offset > 0; offset /= 2) ft_combine(a, ft_shfl_down(a, offset));
}

extern "C" __global__ void __launch_bounds__(FT_COMPARE_THREADS)
ft_compare(const float* __restrict__ out, const double* __restrict__ ref, unsigned long long count,
           int out_nhwc, int C_out, int PQ, double atol, double rtol, ft_stats* stats) {
  const double inf = __longlong_as_double(0x7ff0000000000000LL);
  ft_partial t = {0.0, 0.0, 0.0, 0.0, 0ull, 0ull, ~0ull};
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
    const double o = (double)out[oi];
    const double r = ref[i];
    bool bad = false;
    if (isnan(o) || isnan(r)) {
      bad = isnan(o) != isnan(r);
    } else {
      if (isfinite(o) && isfinite(r)) {
        t.err2 += (o - r) * (o - r);
        t.ref2 += r * r;
      }
      if (o != r) {
        const double err = fabs(o - r);  // infinite when either side is; never NaN here
        t.max_abs = fmax(t.max_abs, err);
        if (fabs(r) >= 1e-6) t.max_rel = fmax(t.max_rel, isfinite(err) ? err / fabs(r) : inf);
        bad = !isfinite(err) || !(err <= atol + rtol * fabs(r));
      }
    }
    if (!isfinite(o) && isfinite(r)) ++t.nonfinite;
    if (bad) {
      ++t.mismatches;
      t.first_bad = min(t.first_bad, i);  // i grows, so this is the thread's first
    }
  }

  __shared__ ft_partial warp_partials[FT_COMPARE_WARPS];
  ft_warp_reduce(t);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_partials[warp] = t;
  __syncthreads();
  if (warp != 0) return;
  t = lane < FT_COMPARE_WARPS ? warp_partials[lane] : ft_partial{0.0, 0.0, 0.0, 0.0, 0ull, 0ull, ~0ull};
  ft_warp_reduce(t);
  if (lane != 0) return;
  // Atomics only where the block found something: most blocks of a passing run add nothing.
  if (t.max_abs > 0.0) atomicMax(&stats->max_abs_bits, (unsigned long long)__double_as_longlong(t.max_abs));
  if (t.max_rel > 0.0) atomicMax(&stats->max_rel_bits, (unsigned long long)__double_as_longlong(t.max_rel));
  if (t.err2 != 0.0) atomicAdd(&stats->sum_err2, t.err2);
  atomicAdd(&stats->sum_ref2, t.ref2);
  if (t.mismatches != 0) atomicAdd(&stats->mismatches, t.mismatches);
  if (t.nonfinite != 0) atomicAdd(&stats->nonfinite, t.nonfinite);
  if (t.first_bad != ~0ull) atomicMin(&stats->first_bad, t.first_bad);
}
