#include "reference/op_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "kernel_templates/ref_bounds.cuh"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

// Where renderings switch form or clamp (ft_math.cuh), and where the functions turn to 0, 1 or
// infinity in fp32.
constexpr float kBranchPoints[] = {0.0f,   0.5f,   0.55f,  1.0f,   2.0f,    3.0f,    6.0f,    8.0f,
                                   9.01f,  10.0f,  15.0f,  20.0f,  30.0f,   87.33f,  88.72f,  103.97f,
                                   1e-3f,  1e-7f,  1e-20f, 1e20f,  3.92f,   5.0f,    0.3f,    100.0f};

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

}  // namespace

std::vector<float> op_sweep_inputs(int per_exponent) {
  std::vector<float> xs;
  const uint32_t span = 1u << 23;
  const uint32_t step = span / uint32_t(per_exponent);
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t e = 0; e < 255; ++e) {
      for (uint32_t j = 0; j < uint32_t(per_exponent); ++j) {
        // Evenly spread, with a deterministic offset inside each step so the low bits vary.
        const uint32_t m = j * step + (j * 2654435761u) % step;
        xs.push_back(from_bits((sign << 31) | (e << 23) | m));
      }
      xs.push_back(from_bits((sign << 31) | (e << 23) | (span - 1)));
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {1.0f, -1.0f}) {
    xs.push_back(s * inf);
    xs.push_back(s * std::numeric_limits<float>::max());
    xs.push_back(s * std::numeric_limits<float>::denorm_min());
    for (float b : kBranchPoints) {
      float x = s * b;
      for (int k = 0; k < 8; ++k) x = std::nextafter(x, -inf);
      for (int k = 0; k < 17; ++k, x = std::nextafter(x, inf)) xs.push_back(x);
    }
  }
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  return xs;
}

UlpError ulp_error(float got, double ref) {
  UlpError r;
  if (std::isnan(ref) || std::isinf(ref)) {
    r.special_ok = std::isnan(ref) ? std::isnan(got) : double(got) == ref;
    return r;
  }
  // A finite reference beyond fp32's range rounds to infinity.
  if (std::fabs(ref) > double(std::numeric_limits<float>::max())) {
    r.special_ok = std::isinf(got) && (got > 0) == (ref > 0);
    if (r.special_ok || std::isnan(got)) return r;
  }
  if (!std::isfinite(got)) {
    r.special_ok = false;
    return r;
  }
  const double a = std::fabs(ref);
  const double ulp = a >= 0x1p-126 ? std::ldexp(1.0, std::ilogb(a) - 23) : 0x1p-149;
  r.ulps = std::fabs(double(got) - ref) / ulp;
  return r;
}

void add_result(OpErrorSummary& s, const spec::Op& op, float v, float got, double ref) {
  ++s.count;
  const UlpError e = ulp_error(got, ref);
  if (!e.special_ok) {
    ++s.special_mismatches;
    if (s.over_bound++ == 0) s.first_over_bound = v;
    return;
  }
  if (!std::isfinite(ref) || std::fabs(ref) > double(std::numeric_limits<float>::max())) return;
  if (std::fabs(ref) >= 0x1p-126) {
    if (e.ulps > s.max_ulps) s.max_ulps = e.ulps, s.max_at = v;
  } else if (e.ulps > s.max_ulps_tiny) {
    s.max_ulps_tiny = e.ulps, s.tiny_at = v;
  }
  // The TF32 rule's allowance for the rendering (ref_bounds.cuh's rho with an exact input),
  // plus a few steps of 2^-149 per unit of |v| for results in the subnormal range, where a
  // product like x e^x carries the rounding of a subnormal factor.
  const spec::BoundFact& fact = spec::op_info(op.kind).bound;
  double allowed = (fact.ulps + fact.xrel * std::max(-double(v), 0.0)) * FT_U_FP32 * std::fabs(ref) +
                   (fact.cancels ? fact.ulps * FT_U_FP32 * std::fabs(double(v)) : 0.0);
  allowed += 0x1p-149 * 4.0 * (1.0 + std::fabs(double(v)));
  if (std::fabs(double(got) - ref) > allowed) {
    if (s.over_bound++ == 0) s.first_over_bound = v;
  }
}

std::string allowance_text(const spec::Op& op) {
  const spec::BoundFact& fact = spec::op_info(op.kind).bound;
  return fact.xrel != 0.0 ? fmt::format("{} + {} max(-x, 0)", fact.ulps, fact.xrel) : fmt::format("{}", fact.ulps);
}

std::vector<spec::Op> op_sweep_ops() {
  std::vector<spec::Op> ops;
  for (const spec::OpInfo& info : spec::all_ops()) {
    spec::Op op{info.kind, {}};
    // Binary ops and clamp take typical scalars; the rest PyTorch's defaults.
    if (info.min_args >= 1) op.args.push_back(spec::Operand{false, info.kind == spec::OpKind::clamp ? -1.5 : 0.3, -1});
    if (info.min_args >= 2) op.args.push_back(spec::Operand{false, 2.5, -1});
    ops.push_back(op);
  }
  return ops;
}

}  // namespace fusetune::reference
