#include "reference/l2_model.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include "kernel_templates/ft_tf32.cuh"
#include "kernel_templates/ref_bounds.cuh"

namespace fusetune::reference {
namespace {

// The rounding error of v to TF32, round to nearest (ties away, as cvt.rna and ft_tf32_bits).
double tf32_error(float v) {
  if (!std::isfinite(v)) return 0.0;
  const auto r = std::bit_cast<float>(ft_tf32_bits(std::bit_cast<uint32_t>(v)));
  return double(r) - double(v);
}

}  // namespace

double var_scale(std::span<const float> x_sample, std::span<const float> w) {
  double x2 = 0.0, ex2 = 0.0;
  for (float v : x_sample) {
    if (!std::isfinite(v)) continue;
    x2 += double(v) * double(v);
    const double e = tf32_error(v);
    ex2 += e * e;
  }
  double w2 = 0.0, ew2 = 0.0;
  for (float v : w) {
    if (!std::isfinite(v)) continue;
    w2 += double(v) * double(v);
    const double e = tf32_error(v);
    ew2 += e * e;
  }
  if (!(x2 > 0.0) || !(w2 > 0.0)) return 1.0;
  const double nx = double(x_sample.size());
  const double model = (2.0 / 3.0) * FT_U_TF32 * FT_U_TF32 * (x2 / nx) * w2;
  return (w2 * (ex2 / nx) + (x2 / nx) * ew2) / model;
}

double expected_rel_l2(double sum_var, double sum_ref2, double kappa) {
  const double e = std::sqrt(kappa * sum_var);
  return sum_ref2 > 0.0 ? e / std::sqrt(sum_ref2) : e;
}

double rel_l2_limit(double sum_var, double sum_ref2, double n, double kappa) {
  if (!(n > 0.0)) return 4.0 * FT_U_FP32;
  return (kL2Multiple + 3.0 / std::sqrt(n)) * expected_rel_l2(sum_var, sum_ref2, kappa) + 4.0 * FT_U_FP32;
}

}  // namespace fusetune::reference
