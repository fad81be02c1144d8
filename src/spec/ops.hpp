#pragma once
// The op table: names, argument counts and defaults of every epilogue op, in one
// place, so the parser, the canonical printer, codegen and the references agree.
#include <optional>
#include <string_view>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec {

struct OpInfo {
  OpKind kind;
  std::string_view name;        // spec spelling, also the canonical one
  int min_args;                 // operands written in the spec (the literal `x` not counted)
  int max_args;
  bool allows_param;            // operand may be the per-channel `param[k]`
  std::vector<double> defaults; // values for omitted trailing arguments (size == max_args)
};

// Info for one op; every OpKind has an entry.
const OpInfo& op_info(OpKind kind);
// Looks up a spec name ("leaky_relu"); nullopt for unknown names and for reductions.
std::optional<OpKind> op_from_name(std::string_view name);
// All elementwise ops, in OpKind order.
const std::vector<OpInfo>& all_ops();

// For the binary ops written with an explicit `x` (`sub(1.5, x)`): the op that takes the
// operand first. sub -> rsub, div -> rdiv; add, mul, min, max commute so map to themselves.
// nullopt for ops that do not accept the `x` form.
std::optional<OpKind> operand_first_form(OpKind kind);

std::string_view reduce_name(ReduceKind kind);                 // "reduce_min", ...
std::optional<ReduceKind> reduce_from_name(std::string_view name);

std::string_view layout_name(Layout layout);                   // "nchw", "nhwc", "any"
std::optional<Layout> layout_from_name(std::string_view name);

}  // namespace fusetune::spec
