// fusetune: the fp32 renderings of the epilogue's ops, written once for the device (NVRTC pastes
// this file in front of ft_common.cuh in every generated kernel) and for the host (the GPU-free
// proof, tests/op_math_fp32_test.cpp, includes it), so the CPU sweeps the same code the GPU runs.
// docs/op-math.md gives each rendering's derivation and its measured error.
//
// Why these forms: an epilogue pass should cost what moving its bytes costs. On the H200 that
// leaves about 60 fp32 instructions per element, and CUDA's accurate libm spends 30 on erff,
// 33 on log1pf and 13 on an IEEE division, so `mish | mish` rendered as x·tanh(softplus x)
// (three libm calls each) ran at half the copy bandwidth. The forms below use one exponential
// per op and short polynomials, branch-free. Inside the fused conv the epilogue shares the SM's
// issue slots with the MMA warps, so every instruction shows in the conv's time (`mish | mish`
// cost +15% over `x 2` with 19-instruction mishes, +4.7% with a 9-instruction diagnostic one:
// docs/perf-notes.md, v11); the exponentials of mish, sigmoid, silu, gelu_tanh and softplus are
// therefore ft_exp_sq (3 instructions; its error grows with -x below 0, and the TF32 rule grants
// those ops that growth: spec::BoundFact::xrel) and their reciprocals rcp.approx alone.
//
// The device and the host differ only in the primitives below: expf, tanhf, erff, logf, exp2f's
// ex2.approx (CUDA's, max error 2 / 2 / 2 / 1 / 2 ulp by the CUDA Math API documentation, against
// glibc's on the host) and rcp.approx.ftz (1 ulp by the PTX ISA, against a correctly rounded
// 1/d). The host proof runs
// every rendering with its primitives pushed to each end of their documented error
// (ft_host_primitive_bias), so what it proves holds for the device's primitives too; the GPU test
// (tests/gpu_op_math_test.cpp) measures the device's code itself.
#ifndef FT_MATH_CUH
#define FT_MATH_CUH

// Under NVRTC or nvcc the renderings are device functions (nvcc's host pass then skips them);
// a host C++ compiler gets the host twins of the primitives.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FT_MATH_DEVICE 1
#define FT_MATH_HD __device__ __forceinline__
#else
#define FT_MATH_DEVICE 0
#include <cmath>
#include <cstdint>
#include <cstring>
#define FT_MATH_HD inline
#endif

#if !FT_MATH_DEVICE
// Host only: -1, 0 or +1. Each primitive's result moves by its documented maximum error in that
// direction, so the host proof covers the device's primitives, whatever their exact bits.
inline thread_local int ft_host_primitive_bias = 0;

// r moved by `ulps` units in the last place, towards +inf for bias +1 (finite, non-zero r only).
inline float ft_host_perturb(float r, int ulps) {
  if (ft_host_primitive_bias == 0 || !std::isfinite(r) || r == 0.0f) return r;
  int32_t bits;
  std::memcpy(&bits, &r, sizeof bits);
  const int32_t step = (r > 0.0f ? 1 : -1) * ft_host_primitive_bias * ulps;
  const int32_t mag = (bits & 0x7fffffff) + step;
  if (mag <= 0) return 0.0f * r;
  bits = (bits & int32_t(0x80000000)) | (mag >= 0x7f800000 ? 0x7f800000 : mag);
  std::memcpy(&r, &bits, sizeof r);
  return r;
}

// For tanh and erf: saturated results (exactly +-1, as CUDA's tanhf and erff return past
// |x| = 9.01 and 3.92) stay, and a moved result stays inside [-1, 1], as theirs do.
inline float ft_host_perturb_unit(float r, int ulps) {
  if (r == 1.0f || r == -1.0f || r != r) return r;
  const float p = ft_host_perturb(r, ulps);
  return p > 1.0f ? 1.0f : (p < -1.0f ? -1.0f : p);
}
#endif

// ---- primitives --------------------------------------------------------------------------------
FT_MATH_HD float ft_p_expf(float x) {
#if FT_MATH_DEVICE
  return expf(x);
#else
  return ft_host_perturb(std::exp(x), 2);
#endif
}
FT_MATH_HD float ft_p_tanhf(float x) {
#if FT_MATH_DEVICE
  return tanhf(x);
#else
  return ft_host_perturb_unit(std::tanh(x), 2);
#endif
}
FT_MATH_HD float ft_p_erff(float x) {
#if FT_MATH_DEVICE
  return erff(x);
#else
  return ft_host_perturb_unit(std::erf(x), 2);
#endif
}
FT_MATH_HD float ft_p_logf(float x) {
#if FT_MATH_DEVICE
  return logf(x);
#else
  return ft_host_perturb(std::log(x), 1);
#endif
}

// 2^t, flushing results below 2^-126 to zero: ex2.approx.ftz, the MUFU.EX2 that CUDA's exp2f
// (2 ulp over its whole range) is built on, without exp2f's three instructions for subnormal
// results (ft_exp_sq never asks for one).
FT_MATH_HD float ft_p_ex2(float t) {
#if FT_MATH_DEVICE
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(t));
  return y;
#else
  const float r = std::exp2(t);
  return r < 0x1p-126f ? 0.0f : ft_host_perturb(r, 2);
#endif
}

// 1/d for a normal, positive, finite d: rcp.approx alone (1 ulp), for the renderings whose
// allowance has room for it (mish, sigmoid, log1p's quotient).
FT_MATH_HD float ft_rcp_fast(float d) {
#if FT_MATH_DEVICE
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(d));
  return y;
#else
  return ft_host_perturb(1.0f / d, 1);
#endif
}

// e^x in three instructions: h = 2^(x log2(e) / 2), then h * h. Half the exponent keeps h >= 2^-126
// (no flush) for every x whose e^x is at least 2^-150, so subnormal results come from one
// correctly rounded product, and h * h overflows exactly where e^x does. Error: the rounding of
// x * fp32(log2(e) / 2) (itself 0.224u below the exact constant) moves the result by up to about
// 0.612 |x| u twice over, plus ex2's 2 ulp twice and the product's rounding: |e^x| (1.224 |x| +
// 11) u. CUDA's expf spends 8 instructions to keep 2 ulp for every x; in the ops below the |x|
// part reaches the result only where it is e^x-small, and their allowance grows there
// (spec::BoundFact::xrel).
FT_MATH_HD float ft_exp_sq(float x) {
  const float h = ft_p_ex2(x * 0.72134752044448170f);
  return h * h;
}

// NaN-propagating min/max (torch.minimum/maximum, clamp): one instruction on sm_80+, where
// fminf/fmaxf would drop a NaN.
FT_MATH_HD float ft_min(float a, float b) {
#if FT_MATH_DEVICE && __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? a + b : (b < a ? b : a);
#endif
}
FT_MATH_HD float ft_max(float a, float b) {
#if FT_MATH_DEVICE && __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return (a != a || b != b) ? a + b : (b > a ? b : a);
#endif
}

FT_MATH_HD float ft_fma(float a, float b, float c) {
#if FT_MATH_DEVICE
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// ---- ops -----------------------------------------------------------------------------------------
// torch.clamp(x, lo, hi) = min(max(x, lo), hi), so lo > hi gives hi.
FT_MATH_HD float ft_clamp(float v, float lo, float hi) { return ft_min(ft_max(v, lo), hi); }
FT_MATH_HD float ft_relu(float v) { return ft_max(v, 0.0f); }
FT_MATH_HD float ft_leaky_relu(float v, float slope) { return v > 0.0f ? v : v * slope; }

// 1 / (1 + e^-|x|), and e^-|x| times it for x < 0: e^x / (1 + e^x) keeps full relative accuracy
// where sigmoid is tiny (1 / (1 + e^-x) would lose it to e^-x's overflow below x = -88). The
// denominator is in [1, 2]: rcp.approx needs no special case, and the min keeps an rcp.approx
// that rounds 1 up from making sigmoid exceed 1 (and silu(FLT_MAX) infinite). Error about
// (1.224 |x| + 15) u below 0, where sigmoid is e^x and carries the exponential's error; above,
// the exponential's share shrinks like e^-x (at most 6u at x = 0), about 9u in all.
FT_MATH_HD float ft_sigmoid(float v) {
  const float e = ft_exp_sq(-fabsf(v));
  const float y = ft_min(ft_rcp_fast(1.0f + e), 1.0f);
  return v >= 0.0f ? y : e * y;
}
FT_MATH_HD float ft_silu(float v) { return v * ft_sigmoid(v); }

// tanh(softplus x) = n / (n + 2) with n = e^x (e^x + 2), exactly; past x = 20 the true quotient
// rounds to 1 in fp32, so x is clamped there and e^x never overflows (nor n + 2 leave [2, 2^58]);
// this rendering's quotient is within an ulp of 1 there (rcp.approx is not exact). One
// exponential instead of expf, log1pf and tanhf: 11 instructions. Error about (1.224 |x| + 17) u
// below 0 (the quotient is e^x there and carries the exponential's error), about 17u above; the
// quotient is kept <= 1 (an rcp.approx 1 ulp high would make mish(FLT_MAX) infinite).
FT_MATH_HD float ft_mish(float v) {
  const float e = ft_exp_sq(ft_min(v, 20.0f));
  const float n = ft_fma(e, e, e + e);
  return v * ft_min(n * ft_rcp_fast(n + 2.0f), 1.0f);
}

// log(1 + z) for z in [0, 1]: 2 atanh(s) with s = z / (2 + z) in [0, 1/3], as 2s + s^3 P(s^2);
// P is a degree-3 fit of (2 atanh(s) - 2s) / s^3 on s^2 in [0, 1/9] (relative error of the
// result below 2^-26 with these fp32 coefficients, docs/op-math.md), so the error is the
// quotient's and the roundings', about 3 ulp.
FT_MATH_HD float ft_log1p_unit(float z) {
  const float s = z * ft_rcp_fast(z + 2.0f);
  const float s2 = s * s;
  float p = 0.27701297402381897f;
  p = ft_fma(p, s2, 0.2805377244949341f);
  p = ft_fma(p, s2, 0.4001940190792084f);
  p = ft_fma(p, s2, 0.666664183139801f);
  return ft_fma(s * s2, p, s + s);
}
// log(1 + e^x) = max(x, 0) + log1p(e^-|x|): never overflows, exactly x for large x. Below 0 the
// result is about e^x and carries the exponential's (1.22 |x| + 9) u, which the allowance's
// |x| term (softplus cancels) covers; above, that error is e^-x times smaller than the result.
FT_MATH_HD float ft_softplus1(float v) { return fmaxf(v, 0.0f) + ft_log1p_unit(ft_exp_sq(-fabsf(v))); }
// torch.nn.functional.softplus: exactly x where beta * x > threshold.
FT_MATH_HD float ft_softplus(float v, float beta, float threshold) {
  const float bx = beta * v;
  return bx > threshold ? v : ft_softplus1(bx) / beta;
}

// erf form: 0.5 x (1 + erf(x / sqrt 2)).
FT_MATH_HD float ft_gelu(float v) { return 0.5f * v * (1.0f + ft_p_erff(v * 0.707106781186547524f)); }
// 0.5 (1 + tanh u) = sigmoid(2u): the tanh form as x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)),
// which stays accurate for negative x where 1 + tanh u cancels.
FT_MATH_HD float ft_gelu_tanh(float v) {
  const float inner = 1.59576912160573071f * ft_fma(0.044715f * v, v * v, v);
  return v * ft_sigmoid(inner);
}
FT_MATH_HD float ft_tanh(float v) { return ft_p_tanhf(v); }
FT_MATH_HD float ft_exp(float v) { return ft_p_expf(v); }
FT_MATH_HD float ft_log(float v) { return ft_p_logf(v); }

// x (clamp(x + 3, 0, 6) / 6), the division as a product with 1/6 (no FCHK path), the factor in
// [0, 1] first so x never overflows on the way.
FT_MATH_HD float ft_hardswish(float v) { return v * (ft_clamp(v + 3.0f, 0.0f, 6.0f) * 0.16666667163372040f); }
FT_MATH_HD float ft_hardsigmoid(float v) { return ft_clamp(v + 3.0f, 0.0f, 6.0f) * 0.16666667163372040f; }

#endif  // FT_MATH_CUH
