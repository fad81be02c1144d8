// Float64 device twins of src/reference/op_math.cpp, for the GPU verification reference.
// op_math.cpp is the executable spec: every formula here is written the same way, in the
// same order, so the GPU reference agrees with the CPU one to the last few ulps (only the
// math library's exp/log/erf/tanh differ, by 1-2 ulp). The reference kernels are compiled
// with --fmad=false so that `a * b + c` is not contracted into an FMA the CPU does not use.
//
// render_reference_epilogue_source() puts this file in front of the rendered op chain;
// on its own it compiles to nothing (no kernels), which the template compile test checks.
#ifndef FT_REF_MATH_CU
#define FT_REF_MATH_CU

__device__ __forceinline__ double ft_ref_nan() { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ double ft_ref_inf() { return __longlong_as_double(0x7ff0000000000000LL); }

// torch.minimum / torch.maximum / clamp propagate NaN from either side; fmin/fmax would not.
__device__ __forceinline__ double ft_ref_min(double a, double b) {
  if (isnan(a) || isnan(b)) return ft_ref_nan();
  return b < a ? b : a;
}
__device__ __forceinline__ double ft_ref_max(double a, double b) {
  if (isnan(a) || isnan(b)) return ft_ref_nan();
  return b > a ? b : a;
}
// torch.clamp(x, lo, hi) is min(max(x, lo), hi), so lo > hi yields hi everywhere.
__device__ __forceinline__ double ft_ref_clamp(double x, double lo, double hi) {
  return ft_ref_min(ft_ref_max(x, lo), hi);
}

// log(1 + e^x) without overflow for large x.
__device__ __forceinline__ double ft_ref_softplus1(double x) {
  return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}
__device__ __forceinline__ double ft_ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

__device__ __forceinline__ double ft_ref_leaky_relu(double x, double slope) { return x > 0.0 ? x : x * slope; }
// As reference/op_math.cpp: erfc and the sigmoid identity, which do not cancel for negative x.
__device__ __forceinline__ double ft_ref_gelu(double x) {
  return 0.5 * x * erfc(-x / 1.4142135623730951);  // std::numbers::sqrt2
}
__device__ __forceinline__ double ft_ref_gelu_tanh(double x) {
  const double k = sqrt(2.0 / 3.141592653589793);  // sqrt(2 / std::numbers::pi), correctly rounded
  return x * ft_ref_sigmoid(2.0 * k * (x + 0.044715 * x * x * x));
}
__device__ __forceinline__ double ft_ref_silu(double x) { return x * ft_ref_sigmoid(x); }
__device__ __forceinline__ double ft_ref_mish(double x) { return x * tanh(ft_ref_softplus1(x)); }
__device__ __forceinline__ double ft_ref_hardswish(double x) { return x * ft_ref_clamp(x + 3.0, 0.0, 6.0) / 6.0; }
__device__ __forceinline__ double ft_ref_hardsigmoid(double x) { return ft_ref_clamp(x + 3.0, 0.0, 6.0) / 6.0; }
// torch.nn.functional.softplus: linear above the threshold, exactly x there.
__device__ __forceinline__ double ft_ref_softplus(double x, double beta, double threshold) {
  return beta * x > threshold ? x : ft_ref_softplus1(beta * x) / beta;
}

#endif  // FT_REF_MATH_CU
