#pragma once
// The fp32 inputs every op rendering is proved on (tests/op_math_fp32_test.cpp on the CPU,
// tests/gpu_op_math_test.cpp on the GPU, bench/op_accuracy.py for PyTorch's ops): every
// exponent of both signs with `per_exponent` mantissas spread over it (subnormals included),
// +-0, +-inf, NaN, +-FLT_MAX, and the ops' branch points with their neighbours.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::reference {

[[nodiscard]] std::vector<float> op_sweep_inputs(int per_exponent);

// The error of an fp32 result against the float64 value, in the units the tables use.
struct UlpError {
  double ulps = 0.0;      // |got - ref| / ulp(ref), ulp(ref) = 2^(floor(log2 |ref|) - 23), at least 2^-149
  bool special_ok = true;  // NaN where the reference is NaN, the same infinity where it is infinite
};
[[nodiscard]] UlpError ulp_error(float got, double ref);

// The worst error of one op over a sweep.
struct OpErrorSummary {
  std::string op;                // the op as written (e.g. "softplus(1, 20)")
  double max_ulps = 0.0;         // over results with |ref| >= 2^-126
  float max_at = 0.0f;           // its input
  double max_ulps_tiny = 0.0;    // over results below 2^-126 (subnormal range), in units of 2^-149
  float tiny_at = 0.0f;
  uint64_t special_mismatches = 0;  // NaN/inf where the reference has none, or the reverse
  uint64_t over_bound = 0;       // results outside the TF32 rule's allowance for the op (spec::op_info)
  float first_over_bound = 0.0f;
  uint64_t count = 0;
};

// Adds one result to the summary: `v` the input, `got` the fp32 result, `ref` the float64 one.
void add_result(OpErrorSummary& s, const spec::Op& op, float v, float got, double ref);

// The allowance the TF32 rule grants the op, as the error tables print it (units of u): its ulps,
// and its growth term below 0 where it has one (spec::BoundFact::xrel).
[[nodiscard]] std::string allowance_text(const spec::Op& op);

// The ops the sweeps cover: every op kind, with PyTorch's defaults or a typical scalar operand.
[[nodiscard]] std::vector<spec::Op> op_sweep_ops();

}  // namespace fusetune::reference
