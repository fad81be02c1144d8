#pragma once
// The op table: names, argument counts, PyTorch defaults and numerical facts of every
// epilogue op, in one place, so the parser, the canonical printer, codegen and the
// references agree (STYLE.md: one fact, one place).
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec {

// How the TF32 rule bounds sup |f'| over [v - E, v + E] (docs/verification.md):
//   constant  a global constant, the sup over all reals (Lipschitz ops);
//   operand   a function of the op's operand only (mul |a|, div 1/|a|, leaky_relu max(1, |a|));
//   local     a function of v and E (exp, log, sqrt, rdiv, square), +inf where the interval
//             reaches a pole or a domain edge.
enum class SlopeKind { constant, operand, local };

// Which function of kernel_templates/ref_bounds.cuh computes the slope; the values are its
// FT_SLOPE_* codes (src/reference/bounds.cpp static_asserts that they agree), so the host
// twin and the rendered GPU epilogue call the same code with the same facts.
enum class SlopeFn : int {
  constant = 0, mul = 1, div = 2, leaky_relu = 3, exp = 4, log = 5, sqrt = 6, rdiv = 7, square = 8,
  softplus = 9,  // the constant, plus the jump at the switch to linear (ref_bounds.cuh ft_jump)
};

struct BoundFact {
  SlopeKind kind = SlopeKind::constant;
  SlopeFn fn = SlopeFn::constant;
  double slope = 0.0;    // kind == constant: sup |f'| over the reals, rounded up; else 0
  double ulps = 0.0;     // fp32 rendering error: ulps * 2^-24 * (|f(v)| + S*E), see ops.cpp
  bool cancels = false;  // the rendering's error also grows with |v|: + ulps * 2^-24 * (|v| + E)
  // The rendering's relative error also grows with -v below 0 (e^v of a rounded multiple of v,
  // ft_math.cuh's ft_exp_sq, where the result is e^v-small): + xrel * 2^-24 * max(E - v, 0) *
  // (|f(v)| + S*E)
  double xrel = 0.0;
};

struct OpInfo {
  OpKind kind;
  std::string_view name;        // spec spelling, also the canonical one
  int min_args;                 // operands written in the spec (the literal `x` not counted)
  int max_args;
  bool allows_param;            // operand may be the per-channel `param[k]`
  std::vector<double> defaults; // PyTorch's values for omitted trailing arguments (empty, or size == max_args)
  BoundFact bound;              // the TF32 rule's derivative bound and rendering error
};

// Info for one op; every OpKind has an entry.
const OpInfo& op_info(OpKind kind);
// Looks up a spec name ("leaky_relu"); nullopt for unknown names and for reductions.
std::optional<OpKind> op_from_name(std::string_view name);
// All elementwise ops, in OpKind order.
const std::vector<OpInfo>& all_ops();

// op.args[i], or PyTorch's default (a scalar) for an optional operand the op was built
// without; nullopt when operand i is required and missing (or the op has no operand i).
std::optional<Operand> operand_or_default(const Op& op, std::size_t i);

// For the binary ops written with an explicit `x` (`sub(1.5, x)`): the op that takes the
// operand first. sub -> rsub, div -> rdiv; add, mul, min, max commute so map to themselves.
// nullopt for ops that do not accept the `x` form.
std::optional<OpKind> operand_first_form(OpKind kind);

std::string_view reduce_name(ReduceKind kind);                 // "reduce_min", ...
std::optional<ReduceKind> reduce_from_name(std::string_view name);

std::string_view layout_name(Layout layout);                   // "nchw", "nhwc", "any"
std::optional<Layout> layout_from_name(std::string_view name);

}  // namespace fusetune::spec
