#pragma once
// Epilogue ops as CUDA: expressions, chain functions and the reduction's init/step/finish.
// The fp32 twins of reference/op_math.hpp's float64 semantics; the math helpers they call
// (ft_min, ft_gelu, ...) live in kernel_templates/ft_common.cuh.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::codegen {

// Where per-channel values sit in the `chan` buffer: [conv bias (K, iff the conv has a
// bias)][param 0 (K)][param 1 (K)]... — the same layout the reference module uses.
struct ChanLayout {
  int64_t k = 1;
  bool conv_bias = false;
  // Named values a generated chain carries in variables (fused-gemm's `as NAME`): values[j] is the
  // expression of named value j, "" where the kernel does not carry it.
  std::vector<std::string> values = {};
  [[nodiscard]] int64_t param_offset(int param_index) const {
    return (conv_bias ? k : 0) + int64_t(param_index) * k;
  }
};

// The CUDA literal of float(value): "%.9g" digits (enough to round-trip any float) with an
// 'f' suffix, negatives parenthesised, infinities and NaN through ft_common's FT_INF/FT_NAN.
// The kernel thus uses exactly the fp32 constant the reference uses (double(float(value))).
[[nodiscard]] std::string fp32_literal(double value);

// A scalar literal, or "chan[<offset> + k]" for a per-channel operand.
[[nodiscard]] std::string render_operand(const spec::Operand& a, const ChanLayout& chan);

// The op applied to the fp32 variable named `v`, e.g. "ft_min(v, 0.5f)", "v * chan[128 + k]":
// the right-hand side of an assignment (not parenthesised for nesting).
// Optional operands left out take PyTorch's defaults (spec::op_info: leaky_relu 0.01, hardtanh
// -1..1, softplus beta 1 threshold 20); missing required operands throw InputError.
[[nodiscard]] std::string render_op_expr(const spec::Op& op, const std::string& v, const ChanLayout& chan);

// "min(0.5)", "add(param[0])": for comments in generated source.
[[nodiscard]] std::string op_text(const spec::Op& op);

// __device__ __forceinline__ float fn_name(float v, int k, const float* __restrict__ chan) {
//   v = <op 0>;  // op text
//   ...
//   return v;
// }
[[nodiscard]] std::string render_chain_function(const std::string& fn_name, const std::vector<spec::Op>& ops,
                                                const ChanLayout& chan);

// The reduction as expressions over `acc` and `v`: init, step (acc, v) -> acc (also combines
// two partial results), finish (acc) -> result. min/max propagate NaN; mean divides by K.
struct ReduceExprs {
  std::string init;
  std::string step;
  std::string finish;
};
[[nodiscard]] ReduceExprs render_reduce(spec::ReduceKind kind, int64_t k);

// ft_reduce_init(), ft_reduce_step(acc, v), ft_reduce_finish(acc) as device functions.
[[nodiscard]] std::string render_reduce_functions(spec::ReduceKind kind, int64_t k);

}  // namespace fusetune::codegen
