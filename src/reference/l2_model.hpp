#pragma once
// The TF32 rule's relative-L2 limit, derived from the inputs drawn (docs/verification.md, "The
// rel-L2 limit"). The reference carries V = (2/3) u_t^2 B per conv output (B = sum (x w)^2), plus
// the tensor cores' truncating accumulation (ft_var_conv, "The accumulation's term"): each
// TF32 rounding taken as uniform over [-u_t, u_t] * |value|. A real rounding to nearest is
// uniform over half a TF32 ulp of the value, ulp = 2^(e-10) for |value| in [2^e, 2^(e+1)):
// its relative variance is u_t^2 / (3 m^2), m = |value| / 2^e in [1, 2), so the model overstates
// it by a factor that depends on the values' mantissas (0.51 for U(0, 1) or U(-b, b) draws).
// var_scale() measures that factor on the draw itself:
//
//   kappa = (sum_j w_j^2 * mean e(x)^2 + mean x^2 * sum_j e(w_j)^2) / ((2/3) u_t^2 * mean x^2 * sum_j w_j^2)
//
// e(v) = tf32(v) - v (round to nearest, as cvt.rna), the sums over every filter value, the means
// over a sample of x from the draw's distribution. kappa * sum V is then the expected squared error
// of a correct round-to-nearest TF32 result (products independent of each other; the fp32
// accumulation's term is scaled alike, its ulps shrinking as 1/m too), and the limit is a stated multiple
// of the expected rel-L2:
//
//   limit = (kL2Multiple + 3 / sqrt(n)) * sqrt(kappa * sum V) / sqrt(sum ref^2) + 4u
//
// (without the division when sum ref^2 = 0). kappa = 1 gives the rule before issue 41.
#include <span>

namespace fusetune::reference {

// The stated multiple of the expected rel-L2 of a correct round-to-nearest TF32 result.
inline constexpr double kL2Multiple = 2.0;

// kappa above, from a sample of x and every filter value of a draw; 1 when either is empty or
// all zero (nothing to measure: the model as is).
[[nodiscard]] double var_scale(std::span<const float> x_sample, std::span<const float> w);

// The limit above over n checked elements with these sums.
[[nodiscard]] double rel_l2_limit(double sum_var, double sum_ref2, double n, double kappa);

// The expected rel-L2 of a correct round-to-nearest TF32 result: sqrt(kappa * sum V / sum ref^2).
[[nodiscard]] double expected_rel_l2(double sum_var, double sum_ref2, double kappa);

}  // namespace fusetune::reference
