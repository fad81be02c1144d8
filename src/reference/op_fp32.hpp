#pragma once
// The fp32 twin of the generated epilogue, on the host: each op computed by the same rendering
// the kernels run (kernel_templates/ft_math.cuh, included as host code), with the operands as a
// kernel sees them. The GPU-free proof of the renderings (tests/op_math_fp32_test.cpp) and the
// TF32 rule's emulated kernels (tests/tf32_emulation.hpp) use it; codegen/op_render.cpp is the
// device side and must stay in step (tests/op_render_test.cpp checks the expressions).
#include <optional>

#include "spec/problem.hpp"

namespace fusetune::reference {

// A scalar operand as a kernel applies it: the Python float rounded to fp32.
[[nodiscard]] float operand_fp32(const spec::Operand& a, const float* chan_k);

// `v / c` for a scalar c is rendered as `v * r` with r = fp32(1 / fp32(c)) when r is a normal
// number (two roundings, within div's 4-ulp allowance, and no division instruction); otherwise
// (c = 0, inf, NaN, or 1/c outside the normal range) as the division itself.
[[nodiscard]] std::optional<float> reciprocal_for_division(double c);

// One op on v, in fp32, as the generated kernel computes it.
[[nodiscard]] float apply_op_fp32(const spec::Op& op, float v, const float* chan_k);

}  // namespace fusetune::reference
