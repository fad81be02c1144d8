// fusetune: logsumexp over a stream of values in one pass (fused-gemm's reduction over the features,
// where no value is seen twice), written once for the device and the host
// (tests/lse_stream_test.cpp checks it against long double on hostile orders and special values).
//
// The state is a shift m and s = sum exp(v - m). The shift moves only when a value passes it by
// more than FT_LSE_SLACK: each term is then at most e^8 (the sum stays far from overflow), and s
// is rescaled -- one more rounding -- at most once per 8 of the values' range rather than at every
// new maximum. -inf values add nothing; a NaN makes the result NaN; +inf gives +inf, as
// torch.logsumexp.
#ifndef FT_LSE_CUH
#define FT_LSE_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FT_LSE_HD __device__ __forceinline__
#define FT_LSE_EXP(x) expf(x)
#define FT_LSE_LOG(x) logf(x)
#define FT_LSE_NEG_INF __int_as_float(0xff800000)
#else
#include <cmath>
#include <limits>
#define FT_LSE_HD inline
#define FT_LSE_EXP(x) std::exp(x)
#define FT_LSE_LOG(x) std::log(x)
#define FT_LSE_NEG_INF (-std::numeric_limits<float>::infinity())
#endif
#define FT_LSE_SLACK 8.0f

struct ft_lse {
  float m, s;
};

FT_LSE_HD ft_lse ft_lse_init() {
  ft_lse r;
  r.m = FT_LSE_NEG_INF;
  r.s = 0.0f;
  return r;
}

FT_LSE_HD void ft_lse_add(ft_lse& r, float v) {
  if (v == FT_LSE_NEG_INF) return;
  if (v > r.m + FT_LSE_SLACK) {  // also the first value (m = -inf) and +inf
    r.s = r.s == 0.0f ? 1.0f : r.s * FT_LSE_EXP(r.m - v) + 1.0f;
    r.m = v;
  } else if (v == r.m) {
    r.s += 1.0f;  // exact, and +inf after +inf (exp(inf - inf) would be NaN)
  } else {
    r.s += FT_LSE_EXP(v - r.m);  // NaN stays NaN
  }
}

FT_LSE_HD ft_lse ft_lse_join(ft_lse a, ft_lse b) {
  if (b.s == 0.0f) return a;  // nothing (or only -inf) on one side
  if (a.s == 0.0f) return b;
  ft_lse r;
  r.m = a.m > b.m ? a.m : b.m;
  r.s = (a.m == r.m ? a.s : a.s * FT_LSE_EXP(a.m - r.m)) + (b.m == r.m ? b.s : b.s * FT_LSE_EXP(b.m - r.m));
  return r;
}

FT_LSE_HD float ft_lse_finish(ft_lse r) { return r.s == 0.0f ? FT_LSE_NEG_INF : r.m + FT_LSE_LOG(r.s); }

#endif  // FT_LSE_CUH
