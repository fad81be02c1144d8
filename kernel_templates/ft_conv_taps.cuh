// Which input values and weights one output of a conv of any kind reads, in the CPU reference's
// order (src/reference/model_main.cpp's conv_any): shared by the float64 reference terms
// (ref_main_any.cu) and fusetune's own fp32 conv for convs cuDNN's graph API refuses
// (conv_nd_direct.cu), so the fallback reads exactly what the reference checks it against and
// the index arithmetic exists once. gpu_main_terms_test holds the reference's use of it to the
// CPU's terms for every conv kind.
//
// Needs the shape as FT_MA_* #defines (src/reference/main_terms_source.cpp renders them; 2-D
// kinds are the 3-D formulas with D = T = O = 1): x (N, C, D, H, W), w (K, C/g, T, R, S), or
// (C, K/g, T, R, S) when FT_MA_TRANSPOSED; outputs (N, K, O, P, Q). 64-bit indexing throughout.
#ifndef FT_CONV_TAPS_CUH
#define FT_CONV_TAPS_CUH

#ifndef FT_MA_N  // only so that a template including this header compiles alone
#define FT_MA_N 1LL
#define FT_MA_C 4LL
#define FT_MA_D 1LL
#define FT_MA_H 8LL
#define FT_MA_W 8LL
#define FT_MA_K 4LL
#define FT_MA_T 1LL
#define FT_MA_R 3LL
#define FT_MA_S 3LL
#define FT_MA_O 1LL
#define FT_MA_P 6LL
#define FT_MA_Q 6LL
#define FT_MA_STRIDE_D 1LL
#define FT_MA_STRIDE_H 1LL
#define FT_MA_STRIDE_W 1LL
#define FT_MA_PAD_D 0LL
#define FT_MA_PAD_H 0LL
#define FT_MA_PAD_W 0LL
#define FT_MA_DIL_D 1LL
#define FT_MA_DIL_H 1LL
#define FT_MA_DIL_W 1LL
#define FT_MA_GROUPS 1LL
#define FT_MA_TRANSPOSED 0
#endif

// Input index along one dim read by output `out` through tap `tap`, or -1 outside the input:
// model_main.cpp's source(). Forward: in = out*stride - pad + tap*dil. Transposed:
// in = (out + pad - tap*dil) / stride where that divides.
__device__ __forceinline__ long long ft_ma_source(long long out, long long tap, long long size, long long stride,
                                                  long long pad, long long dil) {
#if FT_MA_TRANSPOSED
  const long long num = out + pad - tap * dil;
  if (num < 0 || num % stride != 0) return -1;
  const long long in = num / stride;
#else
  const long long in = out * stride - pad + tap * dil;
#endif
  return in >= 0 && in < size ? in : -1;
}

// Output `flat` of (N, K, O, P, Q) as its coordinates.
__device__ __forceinline__ void ft_conv_output(long long flat, long long& img, long long& k, long long& o,
                                               long long& p, long long& q) {
  q = flat % FT_MA_Q;
  flat /= FT_MA_Q;
  p = flat % FT_MA_P;
  flat /= FT_MA_P;
  o = flat % FT_MA_O;
  flat /= FT_MA_O;
  k = flat % FT_MA_K;
  img = flat / FT_MA_K;
}

// Calls term(weight index, input index) for every product of output (img, k, o, p, q), in the
// CPU's loop nest: taps (t, r, s) outside, the input channels of k's group inside.
template <class Term>
__device__ __forceinline__ void ft_conv_terms(long long img, long long k, long long o, long long p, long long q,
                                              Term&& term) {
  const long long cg = FT_MA_C / FT_MA_GROUPS, kg = FT_MA_K / FT_MA_GROUPS;
  const long long taps = FT_MA_T * FT_MA_R * FT_MA_S;
  const long long g = k / kg;
  for (long long t = 0; t < FT_MA_T; ++t) {
    const long long id = ft_ma_source(o, t, FT_MA_D, FT_MA_STRIDE_D, FT_MA_PAD_D, FT_MA_DIL_D);
    if (id < 0) continue;
    for (long long r = 0; r < FT_MA_R; ++r) {
      const long long ih = ft_ma_source(p, r, FT_MA_H, FT_MA_STRIDE_H, FT_MA_PAD_H, FT_MA_DIL_H);
      if (ih < 0) continue;
      for (long long s = 0; s < FT_MA_S; ++s) {
        const long long iw = ft_ma_source(q, s, FT_MA_W, FT_MA_STRIDE_W, FT_MA_PAD_W, FT_MA_DIL_W);
        if (iw < 0) continue;
        const long long tap = (t * FT_MA_R + r) * FT_MA_S + s;
        for (long long cc = 0; cc < cg; ++cc) {
          const long long c = g * cg + cc;
#if FT_MA_TRANSPOSED
          const long long wi = (c * kg + k % kg) * taps + tap;
#else
          const long long wi = (k * cg + cc) * taps + tap;
#endif
          term(wi, (((img * FT_MA_C + c) * FT_MA_D + id) * FT_MA_H + ih) * FT_MA_W + iw);
        }
      }
    }
  }
}

#endif  // FT_CONV_TAPS_CUH
