// fusetune: the verification rules' arithmetic, written once for the GPU reference kernels
// (NVRTC pastes this file in front of ref_conv.cu, ref_epilogue.cu and ref_compare.cu) and for
// the host (src/reference/*.cpp include it), so the CPU twin and the device compute the same
// bound with the same code. docs/verification.md derives every formula here.
//
// The TF32 rule, per output element: |out - ref| <= E, E carried next to the float64 value:
//   conv      E0 = (2 u_t + u_t^2) A + gamma(CRS) (1 + u_t)^2 A + u |y|,   V0 = (2/3) u_t^2 B
//             A = sum |x_i w_i|, B = sum (x_i w_i)^2 (float64, in the reference conv)
//   bias      E += u (|y + b| + E)
//   op f      E = S E + rho (+ a jump where f is discontinuous),  V = S^2 V
//             S = sup |f'| over [v - E, v + E], rho = (ulps + xrel max(E - v, 0)) u (|f(v)| + S E)
//             [+ ulps u (|v| + E)]
//   reduce    min/max: max_k; sum/mean: sum_k E_k + gamma(K) (sum_k |v_k| + sum_k E_k), ...
// and over the checked elements rel_l2 <= (2 + 3/sqrt(n)) sqrt(sum V)/sqrt(sum ref^2) + 4u.
// E = +inf marks an ill-conditioned element (a pole or domain edge inside [v - E, v + E]): it is
// counted, never checked. The fp32 rule: |out - ref| <= 1e-4 + 1e-4 |ref| + 6 sqrt(V32), V32 the
// variance of a correct fp32 computation (ft_var_dot_fp32 through the same stages).
//
// Constants are in units of the formats' unit roundoff: u_t = 2^-11 (TF32: 10 stored mantissa
// bits, round to nearest), u = 2^-24 (fp32), u_acc = 2^-23 (fp32 accumulation, allowing adders
// that truncate). The host includes <cmath> only when not compiled as CUDA.
#ifndef FT_REF_BOUNDS_CUH
#define FT_REF_BOUNDS_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FT_HD __host__ __device__
#define FT_M(fn) fn  // CUDA's math functions, global namespace, host and device
#else
#include <cmath>
#define FT_HD
#define FT_M(fn) std::fn
#endif

#define FT_U_TF32 0x1p-11
#define FT_U_FP32 0x1p-24
#define FT_U_ACC 0x1p-23
#define FT_FP32_ATOL 1e-4
#define FT_FP32_RTOL 1e-4
#define FT_REL_FLOOR 1e-6  // max_rel only where |ref| >= this (reference/compare.hpp's kRelFloor)
#define FT_FLT_MAX 0x1.fffffep127

FT_HD inline double ft_bound_inf() {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(0x7ff0000000000000LL);
#else
  return __builtin_huge_val();
#endif
}

// |x|, with NaN counted as 0: a NaN value is checked as "NaN in both" (reference/compare.hpp),
// so it must not turn its own bound into NaN.
FT_HD inline double ft_babs(double x) { return x == x ? FT_M(fabs)(x) : 0.0; }

// gamma(n) = n u_acc / (1 - n u_acc): the relative forward error bound of n fp32 additions in
// any order. Infinite when n u_acc >= 1 (2^23 terms): no bound.
FT_HD inline double ft_gamma(double n) {
  const double t = n * FT_U_ACC;
  return t < 1.0 ? t / (1.0 - t) : ft_bound_inf();
}

// ---- storage ---------------------------------------------------------------------------------
// A bound or variance as fp32, rounded UP (never below the double), +inf for NaN or overflow.
FT_HD inline float ft_bound_store(double d) {
  if (!(d <= FT_FLT_MAX)) {
    if (d < 0.0) return 0.0f;  // not reached: bounds are >= 0; keeps the cast below defined
    return (float)ft_bound_inf();
  }
  if (d <= 0.0) return 0.0f;
#ifdef __CUDA_ARCH__
  return __double2float_ru(d);
#else
  float f = (float)d;
  if ((double)f < d) f = FT_M(nextafterf)(f, (float)ft_bound_inf());
  return f;
#endif
}

// ---- the convolution ---------------------------------------------------------------------------
// A TF32 convolution: x and w rounded to TF32 (relative error <= u_t each, so a product is off by
// <= (2 u_t + u_t^2) |x w|), the products exact in fp32 (11 + 11 significand bits), summed in
// fp32 (<= gamma(CRS) times the sum of the rounded products' magnitudes, <= (1 + u_t)^2 A), and
// the result rounded to fp32 (u |y|).
FT_HD inline double ft_bound_conv(double a, double y, double crs) {
  const double ut = FT_U_TF32;
  return (2.0 * ut + ut * ut) * a + ft_gamma(crs) * (1.0 + ut) * (1.0 + ut) * a + FT_U_FP32 * FT_M(fabs)(y);
}
// The squared error of the fp32 accumulation on tensor cores (issue 41; call 126 found correct
// convs over the rel-L2 limit at C*R*S = 2304 on coherent sums). An MMA k-step adds 8 products
// to the accumulator with their alignment and the result truncated, not rounded: an error of one
// sign, at most about 2 ulps of the partial sum per step (the result's truncation < 1 ulp, the
// 8 products' alignment < 1 ulp with 3 guard bits). A coherent sum's partial sums grow to |y|,
// |y|/2 on average, so over ceil(n/8) steps the error is at most ceil(n/8) * 2 ulps * |y|/2
// = ceil(n/8) * 2 * u * |y| (u = 2^-24, an ulp 2 u relative). Where the terms' signs mix, the
// partial sums and their errors change sign and |y| << A keeps the term small.
#define FT_ACC_KSTEP 8.0
#define FT_ACC_ULPS_PER_STEP 2.0
FT_HD inline double ft_var_accumulation(double y, double n) {
  const double e = FT_ACC_ULPS_PER_STEP * FT_M(ceil)(n / FT_ACC_KSTEP) * FT_U_FP32 * FT_M(fabs)(y);
  return e * e;
}
// Each input rounding is an independent error uniform in [-u_t, u_t] relative (variance u_t^2 / 3),
// two per product, plus the accumulation's: the expected squared error of a TF32 conv of n terms
// whose sum (without bias) is y and whose squared terms sum to b.
FT_HD inline double ft_var_conv(double y, double b, double n) {
  return (2.0 / 3.0) * FT_U_TF32 * FT_U_TF32 * b + ft_var_accumulation(y, n);
}

// The fp32 rule's dot-product term (issue 45; docs/verification.md, "The fp32 rule"): the variance
// of a correct fp32 computation's error in a sum of n products whose sum is y and whose squared
// products sum to b. Each partial sum s_j is rounded once (an FMA, or the add after an exact
// product), an error of at most u |s_j| and variance at most u^2 s_j^2 / 3; a sequential order's
// partial sums walk from 0 to y, E[s_j^2] = j b/n + (j y/n)^2, so the sum over j is
// n (b/2 + y^2/3) for any order whose partial sums stay within a sequential one's (a tree's or
// a split's are smaller). 3xTF32 products add u_t^4 b: the dropped x_lo w_lo and the TF32
// roundings of x_lo and w_lo, each <= u_t^2 |x w| (their variance if uniform).
// A CPU emulation of a sequential fp32 FMA sum (K = 8192, 20,000 sums) measured an rms error of
// 0.53 of its square root and a largest of 3.6. The fp32 rule adds FT_FP32_DOT_SIGMAS of its
// square root to KernelBench's 1e-4 + 1e-4 |ref|: it matters only where the dot product itself
// cannot meet 1e-4 (a long K at a scale no module initialises, a matmul of two U(-1, 1) inputs);
// a TF32 product's own error is sqrt(2/3) u_t sqrt(b), 180x this term's at K = 8192, and the
// tensor cores' truncating accumulation (a bias of one sign growing with |y|) is not in it.
#define FT_FP32_DOT_SIGMAS 6.0
// The rounding of an fp32 sum of n values whose sum is y and whose squares sum to b.
FT_HD inline double ft_var_sum_fp32(double y, double b, double n) {
  const double u = FT_U_FP32;
  return (u * u / 3.0) * n * (0.5 * b + y * y / 3.0);
}
FT_HD inline double ft_var_dot_fp32(double y, double b, double n) {
  const double t2 = FT_U_TF32 * FT_U_TF32;
  return ft_var_sum_fp32(y, b, n) + t2 * t2 * b;
}
// The main operator's variance under the math mode's rule: strict fp32 (1) or TF32 (0).
FT_HD inline double ft_var_main(double y, double b, double n, int strict) {
  return strict ? ft_var_dot_fp32(y, b, n) : ft_var_conv(y, b, n);
}

// The conv bias added in fp32: one rounding of a value within e of y + b.
FT_HD inline double ft_bound_bias(double e, double biased) {
  return e + FT_U_FP32 * (ft_babs(biased) + e);
}

// ---- elementwise ops ---------------------------------------------------------------------------
// How sup |f'| over [v - e, v + e] is found: the `fn` field of spec::OpInfo's bound fact (the
// numbering is spec::SlopeFn's; src/reference/bounds.cpp checks that they agree).
#define FT_SLOPE_CONSTANT 0   // a global constant (spec::OpInfo), whatever v and e
#define FT_SLOPE_MUL 1        // |a|
#define FT_SLOPE_DIV 2        // 1 / |a|
#define FT_SLOPE_LEAKY_RELU 3 // max(1, |a|)
#define FT_SLOPE_EXP 4        // e^(v + e)
#define FT_SLOPE_LOG 5        // 1 / (v - e); inf when v - e <= 0
#define FT_SLOPE_SQRT 6       // 1 / (2 sqrt(v - e)); inf when v - e <= 0
#define FT_SLOPE_RDIV 7       // |a| / (|v| - e)^2; inf when |v| <= e
#define FT_SLOPE_SQUARE 8     // 2 (|v| + e)
#define FT_SLOPE_SOFTPLUS 9   // the constant (1), plus the jump at the switch to linear

// sup |f'| over [v - e, v + e]; +inf when unbounded there (the interval reaches a pole or a domain
// edge) or unknown (NaN v). a0 is the op's first operand (scalar or this channel's value).
FT_HD inline double ft_slope(int fn, double constant, double a0, double v, double e) {
  const double inf = ft_bound_inf();
  switch (fn) {
    case FT_SLOPE_CONSTANT:
    case FT_SLOPE_SOFTPLUS: return constant;
    case FT_SLOPE_MUL: return FT_M(fabs)(a0);
    case FT_SLOPE_DIV: return 1.0 / FT_M(fabs)(a0);  // inf for a = 0
    case FT_SLOPE_LEAKY_RELU: return FT_M(fabs)(a0) > 1.0 ? FT_M(fabs)(a0) : 1.0;
    case FT_SLOPE_EXP: return FT_M(exp)(v + e);  // overflows to inf; NaN for NaN v
    case FT_SLOPE_LOG: {
      const double lo = v - e;
      return lo > 0.0 ? 1.0 / lo : inf;
    }
    case FT_SLOPE_SQRT: {
      const double lo = v - e;
      return lo > 0.0 ? 0.5 / FT_M(sqrt)(lo) : inf;
    }
    case FT_SLOPE_RDIV: {
      const double d = FT_M(fabs)(v) - e;
      return d > 0.0 ? FT_M(fabs)(a0) / (d * d) : inf;
    }
    case FT_SLOPE_SQUARE: return 2.0 * (FT_M(fabs)(v) + e);
    default: return inf;
  }
}

// The size of a discontinuity of f inside [v - e, v + e], 0 if none. Only softplus(beta,
// threshold) has one: beta*x > threshold switches from log(1 + e^(beta x))/beta to x, a step of
// log1p(e^-threshold)/|beta| (2e-9 at PyTorch's threshold 20; 0.02 at beta 2, threshold 3). An
// fp32 kernel decides the branch on round(beta * out), so the interval is widened by the rounding
// of that product. make_problem_data places conv biases on this switch on purpose.
FT_HD inline double ft_jump(int fn, double a0, double a1, double v, double e) {
  if (fn != FT_SLOPE_SOFTPLUS) return 0.0;
  const double beta = a0, threshold = a1;
  const double w = e + 4.0 * FT_U_FP32 * (FT_M(fabs)(v) + e);
  const double p = beta * (v - w), q = beta * (v + w);
  const double lo = p < q ? p : q, hi = p < q ? q : p;
  if (!(lo <= threshold && threshold <= hi)) return 0.0;  // also for NaN v
  return FT_M(fabs)(FT_M(log1p)(FT_M(exp)(-threshold)) / beta);
}

// One op through the bound: v (the exact value) becomes f = op(v), e and var its bound and
// variance. fn/constant/ulps/cancels are the op's facts (spec::OpInfo); a0, a1 its operands
// (0 where it has none). rho, the op's own fp32 rendering error, is ulps u (|f(v)| + S e): the
// kernel evaluates f at a point within e of v, so |f| there is at most |f(v)| + S e; ops whose
// rendering can cancel (gelu's 1 + erf(x / sqrt 2) at large negative x) add ulps u (|v| + e);
// those whose relative error grows with a negative argument (e^x of a rounded multiple of x,
// which reaches the result where it is e^x-small; above 0 its share shrinks like e^-x) add
// xrel u max(e - v, 0), the largest -x within e of v, to the relative part. Once e is infinite
// (unchecked) it stays so: a value that may be anything may make anything.
FT_HD inline void ft_bound_apply(double& v, double& e, double& var, double f, int fn, double constant, double a0,
                                 double a1, double ulps, int cancels, double xrel = 0.0) {
  const double inf = ft_bound_inf();
  const double s = ft_slope(fn, constant, a0, v, e);
  double next = inf;
  if (e < inf && s < inf) {  // false for NaN too
    const double se = s * e;
    const double below = e - v > 0.0 ? e - v : 0.0;  // the largest -x within e of v, else 0 (NaN v too)
    double rho = (ulps + xrel * below) * FT_U_FP32 * (ft_babs(f) + se);
    if (cancels) rho += ulps * FT_U_FP32 * (ft_babs(v) + e);
    next = se + rho + ft_jump(fn, a0, a1, v, e);
    if (!(next < inf)) next = inf;
  }
  var = s < inf ? s * s * var : inf;
  e = next;
  v = f;
}

// ---- channel reductions ------------------------------------------------------------------------
// spec::ReduceKind's order (checked in src/reference/bounds.cpp).
#define FT_REDUCE_MIN 0
#define FT_REDUCE_MAX 1
#define FT_REDUCE_SUM 2
#define FT_REDUCE_MEAN 3

struct ft_reduce_bound {
  double e_max, var_max;  // min/max: the result is one channel's value
  double e_sum, abs_sum;  // sum/mean: errors add, plus fp32 summation in any order
  double sd_sum;          // sum/mean: standard deviations add (errors fully correlated, the worst case)
  double var_sum, sq_sum; // sum/mean under the fp32 rule: variances add, plus the sum's own rounding
};

FT_HD inline ft_reduce_bound ft_reduce_bound_init() {
  ft_reduce_bound r;
  r.e_max = 0.0;
  r.var_max = 0.0;
  r.e_sum = 0.0;
  r.abs_sum = 0.0;
  r.sd_sum = 0.0;
  r.var_sum = 0.0;
  r.sq_sum = 0.0;
  return r;
}

// e is never NaN (ft_bound_apply, ft_bound_bias keep it in [0, inf]); v may be.
FT_HD inline void ft_reduce_bound_step(ft_reduce_bound& r, double v, double e, double var) {
  r.e_max = e > r.e_max ? e : r.e_max;
  r.var_max = var > r.var_max ? var : r.var_max;
  r.e_sum += e;
  r.abs_sum += ft_babs(v);
  r.sd_sum += FT_M(sqrt)(var);
  r.var_sum += var;
  r.sq_sum += ft_babs(v) * ft_babs(v);
}

// The reduction's bound and variance for result `value` over k channels. mean: the sum's bound
// over k, plus the rounding of the division, counted twice so a kernel may multiply by a rounded
// 1/k instead. The variance: under the TF32 rule the k errors are taken as fully correlated
// (standard deviations add: a coherent TF32 sum's errors share a sign); under the fp32 rule
// (strict 1) they are independent roundings of different dot products, so variances add, with
// the sum's own fp32 rounding (ft_var_sum_fp32) -- adding standard deviations there would
// widen the fp32 term by sqrt(k), enough to pass TF32 products through a reduce_sum over 8192
// features (tests/fp32_rule_test.cpp).
FT_HD inline void ft_reduce_bound_finish(const ft_reduce_bound& r, int kind, double k, double value, double& e,
                                         double& var, int strict = 0) {
  const double inf = ft_bound_inf();
  if (kind == FT_REDUCE_MIN || kind == FT_REDUCE_MAX) {
    e = r.e_max;
    var = r.var_max;
    return;
  }
  double sum_e = r.e_sum + ft_gamma(k) * (r.abs_sum + r.e_sum);
  if (!(sum_e < inf)) sum_e = inf;
  const double sum = kind == FT_REDUCE_SUM ? value : value * k;
  const double sum_var = strict ? r.var_sum + ft_var_sum_fp32(sum, r.sq_sum, k) : r.sd_sum * r.sd_sum;
  if (kind == FT_REDUCE_SUM) {
    e = sum_e;
    var = sum_var;
    return;
  }
  const double mean_e = sum_e / k;
  e = mean_e + 2.0 * FT_U_FP32 * (ft_babs(value) + mean_e);
  if (!(e < inf)) e = inf;
  var = sum_var / (k * k);
}

// ---- comparison --------------------------------------------------------------------------------
// The fp32 rule's tolerance: KernelBench's, and with the variance of a correct fp32 computation
// (ft_var_dot_fp32 carried through the stages; not finite: none added) its 6 standard deviations.
FT_HD inline double ft_fp32_tolerance(double ref) { return FT_FP32_ATOL + FT_FP32_RTOL * FT_M(fabs)(ref); }
FT_HD inline double ft_fp32_tolerance_var(double ref, double var) {
  const double t = ft_fp32_tolerance(ref);
  return var >= 0.0 && var < ft_bound_inf() ? t + FT_FP32_DOT_SIGMAS * FT_M(sqrt)(var) : t;
}

// The TF32 rule's limit on rel_l2 over n checked elements (finite in both) with these sums. The
// measured rel-L2 of cuDNN's TF32 convs is 0.74 times sqrt(sum V)/sqrt(sum ref^2)
// (docs/runs/2026-11-30/diag-tf32-error.md); 2 + 3/sqrt(n) leaves room for small n; 4u for the
// fp32 roundings V does not model. Absolute (no division) when sum ref^2 is 0.
FT_HD inline double ft_rel_l2_limit(double sum_var, double sum_ref2, double n) {
  if (!(n > 0.0)) return 4.0 * FT_U_FP32;
  const double spread = (2.0 + 3.0 / FT_M(sqrt)(n)) * FT_M(sqrt)(sum_var);
  return (sum_ref2 > 0.0 ? spread / FT_M(sqrt)(sum_ref2) : spread) + 4.0 * FT_U_FP32;
}

// Running figures of one comparison (a thread's share, a block's, the whole output's).
struct ft_compare_acc {
  double max_abs, max_rel, worst_ratio;
  double err2, ref2, var_sum;  // over elements finite in both and checked
  unsigned long long mismatches, nonfinite, unchecked, n_l2, first_bad;
};

FT_HD inline ft_compare_acc ft_compare_acc_zero() {
  ft_compare_acc a;
  a.max_abs = 0.0;
  a.max_rel = 0.0;
  a.worst_ratio = 0.0;
  a.err2 = 0.0;
  a.ref2 = 0.0;
  a.var_sum = 0.0;
  a.mismatches = 0;
  a.nonfinite = 0;
  a.unchecked = 0;
  a.n_l2 = 0;
  a.first_bad = ~0ull;
  return a;
}

// Element i: out o against reference r under the fp32 rule (use_bounds 0: KernelBench's 1e-4
// alone; 2: with var, the element's fp32 variance) or the TF32 rule (1; bound, var: the
// element's E and V). The match rules of reference/compare.hpp:
//   - an infinite bound: unchecked (counted; no mismatch, whatever o is; left out of the L2 sums);
//   - o and r both NaN: match; NaN on one side only: mismatch;
//   - o == r (equal infinities too): match;
//   - else |o - r| <= tolerance, with an infinite error never passing.
// `nonfinite` counts checked outputs that are NaN or inf where r is finite (unwritten, overflow).
FT_HD inline void ft_compare_element(ft_compare_acc& t, unsigned long long i, double o, double r, int use_bounds,
                                     double bound, double var) {
  const double inf = ft_bound_inf();
  if (use_bounds == 1 && !(bound < inf)) {
    ++t.unchecked;
    return;
  }
  bool bad = false;
  if (o != o || r != r) {
    bad = (o != o) != (r != r);
    if (bad) t.worst_ratio = inf;
  } else {
    const double tol = use_bounds == 1   ? bound
                       : use_bounds == 2 ? ft_fp32_tolerance_var(r, var)
                                         : ft_fp32_tolerance(r);
    if (FT_M(fabs)(o) < inf && FT_M(fabs)(r) < inf) {
      t.err2 += (o - r) * (o - r);
      t.ref2 += r * r;
      if (use_bounds == 1) t.var_sum += var;
      ++t.n_l2;
    }
    if (o != r) {
      const double err = FT_M(fabs)(o - r);  // infinite when either side is; never NaN here
      t.max_abs = err > t.max_abs ? err : t.max_abs;
      if (FT_M(fabs)(r) >= FT_REL_FLOOR) {
        const double rel = err < inf ? err / FT_M(fabs)(r) : inf;
        t.max_rel = rel > t.max_rel ? rel : t.max_rel;
      }
      bad = !(err < inf) || !(err <= tol);
      const double ratio = err < inf ? err / tol : inf;  // err > 0 here: tol = 0 gives inf
      t.worst_ratio = ratio > t.worst_ratio ? ratio : t.worst_ratio;
    }
  }
  if (!(FT_M(fabs)(o) < inf) && FT_M(fabs)(r) < inf) ++t.nonfinite;
  if (bad) {
    ++t.mismatches;
    t.first_bad = i < t.first_bad ? i : t.first_bad;
  }
}

FT_HD inline void ft_compare_combine(ft_compare_acc& a, const ft_compare_acc& b) {
  a.max_abs = b.max_abs > a.max_abs ? b.max_abs : a.max_abs;  // never NaN
  a.max_rel = b.max_rel > a.max_rel ? b.max_rel : a.max_rel;
  a.worst_ratio = b.worst_ratio > a.worst_ratio ? b.worst_ratio : a.worst_ratio;
  a.err2 += b.err2;
  a.ref2 += b.ref2;
  a.var_sum += b.var_sum;
  a.mismatches += b.mismatches;
  a.nonfinite += b.nonfinite;
  a.unchecked += b.unchecked;
  a.n_l2 += b.n_l2;
  a.first_bad = b.first_bad < a.first_bad ? b.first_bad : a.first_bad;
}

#endif  // FT_REF_BOUNDS_CUH
