// Float64 reference epilogue: conv output (no bias, double, NCHW) -> bias -> pre ops ->
// channel reduction (keepdim) -> post ops, all in double, as src/reference/cpu_reference.cpp
// computes it. The op chain is rendered per problem by render_reference_epilogue_source()
// (src/reference/render_double.cpp) and placed, with ref_math.cu, in front of this file:
//   FT_N, FT_K, FT_P, FT_Q          extents; output (N,K,P,Q), or (N,1,P,Q) when FT_REF_REDUCE
//   FT_REF_HAS_BIAS                 chan[0, K) is the conv bias
//   ft_ref_pre(v, chan, k)          the ops before the reduction (per-channel operands read chan)
//   ft_ref_reduce_init/step/finish  the reduction, when FT_REF_REDUCE
//   ft_ref_post(v)                  the ops after it
// Without FT_REF_RENDERED the chain is the identity, so the template compiles on its own.
//
// Aliasing: y64 and ref64 may be the same buffer when there is no reduction (each element is
// read, then written, by one thread). With a reduction they must not overlap: output n*PQ+pq
// is another thread's input. No __restrict__ on them for that reason.
#ifndef FT_REF_RENDERED
#define FT_N 1
#define FT_K 1
#define FT_P 1
#define FT_Q 1
#define FT_REF_HAS_BIAS 0
#define FT_REF_REDUCE 0
__device__ __forceinline__ double ft_ref_pre(double v, const float* __restrict__, long long) { return v; }
__device__ __forceinline__ double ft_ref_post(double v) { return v; }
#endif

// Pixels per output image, 64-bit: N*K*P*Q exceeds 2^31 for full-size problems.
#define FT_PQ ((long long)FT_P * FT_Q)

#ifndef FT_REF_EPILOGUE_THREADS
#define FT_REF_EPILOGUE_THREADS 256
#endif

__device__ __forceinline__ double ft_ref_biased(double conv, const float* __restrict__ chan, long long k) {
#if FT_REF_HAS_BIAS
  return conv + (double)chan[k];
#else
  (void)chan;
  (void)k;
  return conv;
#endif
}

// Grid-stride over output elements: any grid size is correct, the host caps it.
extern "C" __global__ void __launch_bounds__(FT_REF_EPILOGUE_THREADS)
ft_ref_epilogue(const double* y64, const float* __restrict__ chan, double* ref64) {
  const long long stride = (long long)gridDim.x * blockDim.x;
#if FT_REF_REDUCE
  // One thread per (n, pq): it walks its pixel's K channels in order k = 0..K-1, as the CPU
  // reference does, so a sum or mean adds in the same sequence. Consecutive threads read
  // consecutive pq: coalesced.
  const long long total = (long long)FT_N * FT_PQ;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long n = i / FT_PQ;
    const long long pq = i - n * FT_PQ;
    const double* src = y64 + n * FT_K * FT_PQ + pq;
    double acc = ft_ref_reduce_init();
    for (long long k = 0; k < FT_K; ++k) {
      acc = ft_ref_reduce_step(acc, ft_ref_pre(ft_ref_biased(src[k * FT_PQ], chan, k), chan, k));
    }
    ref64[i] = ft_ref_post(ft_ref_reduce_finish(acc));
  }
#else
  const long long total = (long long)FT_N * FT_K * FT_PQ;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long k = (i / FT_PQ) % FT_K;
    ref64[i] = ft_ref_post(ft_ref_pre(ft_ref_biased(y64[i], chan, k), chan, k));
  }
#endif
}
