#pragma once
// The float64 meaning of every epilogue op and channel reduction: what PyTorch computes,
// evaluated in double so the reference's own rounding is far below any kernel's error.
// Generated kernels must agree with these functions; they are the executable spec.
#include <cstdint>

#include "spec/problem.hpp"

namespace fusetune::reference {

// The value an operand has at one output channel. Scalars are rounded to fp32 first
// (`double(float(value))`): PyTorch and the kernels apply a Python float to an fp32
// tensor as an fp32 number, so mul(0.1) multiplies by 0.100000001490116... .
// chan_k[i] is per-channel parameter i at this channel (indexed by Operand::param_index);
// it may be null when the op has no per-channel operands (post-reduction ops).
[[nodiscard]] double operand_value(const spec::Operand& a, const double* chan_k);

// Applies one elementwise op to x. Optional arguments the struct leaves out take
// PyTorch's defaults (spec::op_info: leaky_relu slope 0.01, hardtanh -1..1, softplus beta 1
// threshold 20); a binary op or clamp without its operands throws InputError.
// Names of ops and reductions are spec's (spec::op_info(kind).name, spec::reduce_name).
[[nodiscard]] double apply_op(const spec::Op& op, double x, const double* chan_k);

// Channel reductions, folded as acc = reduce_step(acc, v) from reduce_init, then
// reduce_finish. min/max propagate NaN like torch.min/torch.max over a dim.
[[nodiscard]] double reduce_init(spec::ReduceKind kind);
[[nodiscard]] double reduce_step(spec::ReduceKind kind, double acc, double v);
[[nodiscard]] double reduce_finish(spec::ReduceKind kind, double acc, int64_t count);

}  // namespace fusetune::reference
