// Float64 reference epilogue: conv output (no bias, double, NCHW) -> bias -> pre ops ->
// channel reduction (keepdim) -> post ops, all in double, as src/reference/cpu_reference.cpp
// computes it. The op chain is rendered per problem by render_reference_epilogue_source()
// (src/reference/render_double.cpp) and placed, with ref_math.cu and ref_bounds.cuh, in front
// of this file:
//   FT_N, FT_K, FT_P, FT_Q          extents; output (N,K,P,Q), or (N,1,P,Q) when FT_REF_REDUCE
//   FT_REF_HAS_BIAS                 chan[0, K) is the conv bias
//   FT_REF_STRICT                   the fp32 rule: a reduction's variances add (independent
//                                   roundings) instead of its standard deviations
//   ft_ref_pre(v, e, var, chan, k)  the ops before the reduction (per-channel operands read chan),
//                                   each carrying the value's bound e and variance var
//                                   (ref_bounds.cuh) from the conv's E0/V0 on (both rules read them)
//   ft_ref_reduce_init/step/finish  the reduction's value, when FT_REF_REDUCE; its bound follows
//                                   FT_REF_REDUCE_KIND (FT_REDUCE_MIN ... in ref_bounds.cuh)
//   ft_ref_post(v, e, var)          the ops after it
// Without FT_REF_RENDERED the chain is the identity, so the template compiles on its own.
//
// Aliasing: in and out (values, bounds, variances) may be the same buffers when there is no
// reduction (each element is read, then written, by one thread). With a reduction they must not
// overlap: output n*PQ+pq is another thread's input. No __restrict__ on them for that reason.
#ifndef FT_REF_RENDERED
#define FT_N 1
#define FT_K 1
#define FT_P 1
#define FT_Q 1
#define FT_REF_HAS_BIAS 0
#define FT_REF_REDUCE 0
#define FT_REF_STRICT 0
#ifndef FT_REF_BOUNDS_CUH
#include "ref_bounds.cuh"  // NVRTC gets it pasted in front instead (render_double.cpp)
#endif
__device__ __forceinline__ void ft_ref_pre(double&, double&, double&, const float* __restrict__, long long) {}
__device__ __forceinline__ void ft_ref_post(double&, double&, double&) {}
#endif

// Pixels per output image, 64-bit: N*K*P*Q exceeds 2^31 for full-size problems.
#define FT_PQ ((long long)FT_P * FT_Q)

#ifndef FT_REF_EPILOGUE_THREADS
#define FT_REF_EPILOGUE_THREADS 256
#endif

// v += bias[k] (fp32 in a kernel: one more rounding for the bound).
__device__ __forceinline__ void ft_ref_bias(double& v, double& e, const float* __restrict__ chan, long long k) {
#if FT_REF_HAS_BIAS
  v = v + (double)chan[k];
  e = ft_bound_bias(e, v);
#endif
  (void)v;
  (void)e;
  (void)chan;
  (void)k;
}

// Element i of the conv-alone answer: its value, and under the TF32 rule its E0 and V0.
__device__ __forceinline__ void ft_ref_load(const double* y64, const float* e_in, const float* v_in, long long i,
                                            double& v, double& e, double& var) {
  v = y64[i];
  e = (double)e_in[i];
  var = (double)v_in[i];
}

__device__ __forceinline__ void ft_ref_store(double* ref64, float* e_out, float* v_out, long long i, double v, double e,
                                             double var) {
  ref64[i] = v;
  e_out[i] = ft_bound_store(e);
  v_out[i] = ft_bound_store(var);
}

// Grid-stride over output elements: any grid size is correct, the host caps it.
extern "C" __global__ void __launch_bounds__(FT_REF_EPILOGUE_THREADS)
ft_ref_epilogue(const double* y64, const float* e_in, const float* v_in, const float* __restrict__ chan, double* ref64,
                float* e_out, float* v_out) {
  const long long stride = (long long)gridDim.x * blockDim.x;
#if FT_REF_REDUCE
  // One thread per (n, pq): it walks its pixel's K channels in order k = 0..K-1, as the CPU
  // reference does, so a sum or mean adds in the same sequence. Consecutive threads read
  // consecutive pq: coalesced.
  const long long total = (long long)FT_N * FT_PQ;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long n = i / FT_PQ;
    const long long pq = i - n * FT_PQ;
    const long long base = n * FT_K * FT_PQ + pq;
    double acc = ft_ref_reduce_init();
    ft_reduce_bound rb = ft_reduce_bound_init();
    for (long long k = 0; k < FT_K; ++k) {
      double v, e, var;
      ft_ref_load(y64, e_in, v_in, base + k * FT_PQ, v, e, var);
      ft_ref_bias(v, e, chan, k);
      ft_ref_pre(v, e, var, chan, k);
      acc = ft_ref_reduce_step(acc, v);
      ft_reduce_bound_step(rb, v, e, var);
    }
    double v = ft_ref_reduce_finish(acc), e = 0.0, var = 0.0;
    ft_reduce_bound_finish(rb, FT_REF_REDUCE_KIND, (double)FT_K, v, e, var, FT_REF_STRICT);
    ft_ref_post(v, e, var);
    ft_ref_store(ref64, e_out, v_out, i, v, e, var);
  }
#else
  const long long total = (long long)FT_N * FT_K * FT_PQ;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long k = (i / FT_PQ) % FT_K;
    double v, e, var;
    ft_ref_load(y64, e_in, v_in, i, v, e, var);
    ft_ref_bias(v, e, chan, k);
    ft_ref_pre(v, e, var, chan, k);
    ft_ref_post(v, e, var);
    ft_ref_store(ref64, e_out, v_out, i, v, e, var);
  }
#endif
}
