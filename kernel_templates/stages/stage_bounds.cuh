// fusetune: the TF32 rule through the version-2 epilogue stages (issue 43): the bound E and the
// variance V of each output of a stage, from the E and V of what it reads, written once for the
// host (src/reference/model_bounds.cpp) and, later, the GPU reference. Needs ref_bounds.cuh
// first (FT_HD, FT_M, ft_gamma, the unit roundoffs). docs/verification.md, "The version-2
// stages", derives each formula; in short, with u = 2^-24 and E_max the largest E read:
//
//   value op y   add/sub: E_x + E_y; mul: |y| E_x + |x| E_y + E_x E_y; div: (E_x + |r| E_y) / (|y| - E_y);
//                min/max: max(E_x, E_y); plus the op's rounding ulps u (|r| + E); V = (S_x sqrt V_x + S_y sqrt V_y)^2
//   logsumexp    E_max + 2 (8u + 3u ln n + gamma(n)) + u (|lse| + E_max);  V = (sum_j s_j sqrt V_j)^2
//   softmax      min(1, s_i (e^(E_i + E_max) - 1)) + 2 s_i (10u + u |v_i - m| + u ln n + gamma(n));
//                V = s_i^2 (sqrt V_i + sum_j s_j sqrt V_j)^2          (s: the softmax weights)
//   log_softmax  E_i + E_lse, V = (sqrt V_i + sum_j s_j sqrt V_j)^2
//   avg pool     the sum's bound over the divisor, plus the division's rounding counted twice
//   norm         |w| (E_i + mean E + dmu + |c_i|/sigma (D_sigma + dsigma) + 2u |c_i|) / sigma_low
//                + 4u (|out| + that): the statistics moved by the inputs' errors (D_sigma <= rms E
//                + mean E, sigma is 1-Lipschitz in the deviations' RMS) and by their own fp32 rounding
//                (a one-pass variance allowed: 2 gamma(n+2) mean v^2), sigma_low the smallest sigma
//                those allow (never below sqrt(eps)); V = (w/sigma)^2 (sqrt V_i + sqrt(mean V / n)(1 + |c_i|/sigma))^2.
// E = +inf anywhere in what a statistic reads makes every output of it unchecked.
#ifndef FT_STAGE_BOUNDS_CUH
#define FT_STAGE_BOUNDS_CUH

// The binary ops that take a carried operand (a named value): spec::OpKind's first eight, in
// its order (src/reference/model_bounds.cpp static_asserts it).
#define FT_BIN_ADD 0
#define FT_BIN_SUB 1
#define FT_BIN_RSUB 2
#define FT_BIN_MUL 3
#define FT_BIN_DIV 4
#define FT_BIN_RDIV 5
#define FT_BIN_MIN 6
#define FT_BIN_MAX 7

// r = x op y with x within ex of its exact value and y within ey; ulps: the op's rendering
// error (spec::OpInfo::bound.ulps). Writes r's bound and variance.
FT_HD inline void ft_bound_binary(int op, double x, double ex, double vx, double y, double ey, double vy, double r,
                                  double ulps, double& e, double& var) {
  const double inf = ft_bound_inf();
  double prop = 0.0, sx = 1.0, sy = 1.0;
  switch (op) {
    case FT_BIN_ADD:
    case FT_BIN_SUB:
    case FT_BIN_RSUB: prop = ex + ey; break;
    case FT_BIN_MUL:
      prop = ft_babs(y) * ex + ft_babs(x) * ey + ex * ey;
      sx = ft_babs(y), sy = ft_babs(x);
      break;
    case FT_BIN_DIV:
    case FT_BIN_RDIV: {
      // r = num / den; the denominator's interval must stay away from 0.
      const double den = op == FT_BIN_DIV ? y : x, eden = op == FT_BIN_DIV ? ey : ex;
      const double enum_ = op == FT_BIN_DIV ? ex : ey;
      if (!(ft_babs(den) > eden)) {
        e = inf, var = inf;
        return;
      }
      prop = (enum_ + ft_babs(r) * eden) / (ft_babs(den) - eden);
      const double snum = 1.0 / ft_babs(den), sden = ft_babs(r) / ft_babs(den);
      sx = op == FT_BIN_DIV ? snum : sden;
      sy = op == FT_BIN_DIV ? sden : snum;
      break;
    }
    default:  // min, max: one of the two, exactly
      prop = ex > ey ? ex : ey;
      var = vx > vy ? vx : vy;
      e = prop;
      return;
  }
  e = prop + ulps * FT_U_FP32 * (ft_babs(r) + prop);
  const double s = sx * FT_M(sqrt)(vx) + sy * FT_M(sqrt)(vy);
  var = s * s;
}

// The rendering error of a max-shifted sum of n exponentials, relative to the sum: each
// exponential's own 2 ulp (4u) and that of the rounded x - m it reads (u |x - m|, at most
// u ln n on average over the softmax weights: the weights' mean of m - x is at most their
// entropy), the sum's gamma(n); doubled, as every rendering error of the rule.
FT_HD inline double ft_exp_sum_rel(double n) {
  return 2.0 * (8.0 * FT_U_FP32 + 3.0 * FT_U_FP32 * FT_M(log)(n) + ft_gamma(n));
}

// logsumexp over n values whose largest bound is e_max; wsum = sum_j s_j sqrt(V_j) with s the
// softmax weights. The value moves by at most e_max (its gradient is the weights, summing to 1).
FT_HD inline void ft_bound_logsumexp(double lse, double n, double e_max, double wsum, double& e, double& var) {
  const double inf = ft_bound_inf();
  if (!(e_max < inf)) {
    e = inf, var = inf;
    return;
  }
  e = e_max + ft_exp_sum_rel(n) + FT_U_FP32 * (ft_babs(lse) + e_max);
  var = wsum * wsum;
}

// softmax output s_i of value v_i (group max m) with bound e_i and variance var_i; the group's
// e_max, wsum and size n as for logsumexp.
FT_HD inline void ft_bound_softmax(double s, double v, double m, double n, double e_i, double var_i, double e_max,
                                   double wsum, double& e, double& var) {
  const double inf = ft_bound_inf();
  if (!(e_max < inf)) {
    e = inf, var = inf;
    return;
  }
  double prop = s * (FT_M(exp)(e_i + e_max) - 1.0);
  prop = prop < 1.0 ? prop : 1.0;  // a softmax output stays in [0, 1]
  e = prop + 2.0 * s * (10.0 * FT_U_FP32 + FT_U_FP32 * ft_babs(v - m)) + s * ft_exp_sum_rel(n);
  const double t = FT_M(sqrt)(var_i) + wsum;
  var = s * s * t * t;
}

// log_softmax output r_i = v_i - lse: v_i's error and the logsumexp's.
FT_HD inline void ft_bound_log_softmax(double r, double lse, double n, double e_i, double var_i, double e_max,
                                       double wsum, double& e, double& var) {
  double e_lse = 0.0, v_lse = 0.0;
  ft_bound_logsumexp(lse, n, e_max, wsum, e_lse, v_lse);
  e = e_i + e_lse + FT_U_FP32 * (ft_babs(r) + e_i + e_lse);
  const double t = FT_M(sqrt)(var_i) + wsum;
  var = t * t;
}

// A sum (bound e_sum, variance var_sum) divided by `divisor`, the division's rounding counted
// twice (a kernel may multiply by a rounded 1/divisor): avg pooling.
FT_HD inline void ft_bound_divide(double quotient, double divisor, double e_sum, double var_sum, double& e, double& var) {
  const double q = e_sum / divisor;
  e = q + 2.0 * FT_U_FP32 * (ft_babs(quotient) + q);
  var = var_sum / (divisor * divisor);
}

// The statistics of one norm group of n values: their bounds' mean and RMS, the mean of |v| and
// of v^2 (for the fp32 statistics' own rounding), sigma = sqrt(var + eps) in float64.
struct ft_norm_bound {
  double n, e_mean, e_rms, abs_mean, sq_mean, sigma, eps, vsqrt_mean;
  int unchecked;  // an element of the group is unchecked (E = +inf)
};

// One output of the norm: c = v_i - mu, w the affine weight (1 without), out the output value.
FT_HD inline void ft_bound_norm(const ft_norm_bound& g, double c, double e_i, double var_i, double w, double out,
                                double& e, double& var) {
  const double inf = ft_bound_inf();
  if (g.unchecked) {
    e = inf, var = inf;
    return;
  }
  const double u = FT_U_FP32;
  // The statistics' own fp32 rounding: the mean's sum; the variance from a one-pass or two-pass
  // sum of squares (the one-pass E[v^2] - mu^2 cancels: bounded by the mean of v^2) and the mean's
  // error squared; rsqrt's 2 ulp.
  const double dmu = ft_gamma(g.n) * g.abs_mean + u * g.abs_mean;
  const double dvar = 2.0 * ft_gamma(g.n + 2.0) * g.sq_mean + dmu * dmu;
  // sigma moves by at most the deviations' RMS error (rms E + mean E) through the inputs.
  const double d_sigma = g.e_rms + g.e_mean;
  double low = g.sigma - d_sigma;
  const double floor = FT_M(sqrt)(g.eps);
  low = low > floor ? low : floor;
  const double ds_round = dvar / (g.sigma + low) + 4.0 * u * g.sigma;
  low = low - ds_round > floor ? low - ds_round : floor;
  const double prop = ft_babs(w) *
                      (e_i + g.e_mean + dmu + ft_babs(c) / g.sigma * (d_sigma + ds_round) + 2.0 * u * ft_babs(c)) /
                      low;
  e = prop + 4.0 * u * (ft_babs(out) + prop);
  // The expected error (the rel-L2 limit's model): the element's own, and the statistics' from
  // n errors, their independent parts shrinking as 1/sqrt(n) (a part common to the group, such as
  // a rounded filter tap's, moves mu and cancels).
  const double t = FT_M(sqrt)(var_i) + g.vsqrt_mean / FT_M(sqrt)(g.n) * (1.0 + ft_babs(c) / g.sigma);
  var = (w / g.sigma) * (w / g.sigma) * t * t;
}

#endif  // FT_STAGE_BOUNDS_CUH
