#pragma once
// The argument rules of one epilogue op, applied once its arguments are read: the
// operand order of `sub(1.5, x)`, argument counts, defaults, where `param[k]` may appear
// and value constraints (clamp lo <= hi). Internal to the parser.
#include <string_view>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec::detail {

// One argument as written: a number, `param[k]`/`param[1]`, a named value, an extra input
// (`input1`), or the literal `x` that marks the operand order of a binary op.
struct Arg {
  enum class Kind { number, param, x, value, input } kind;
  Operand operand;
  int column;                 // of the argument's first token, for errors
  bool scalar_param = false;  // `param[1]`, a learned scalar (allowed after a channel reduction)
};

// Builds the op `name(args...)` with every default filled in, or throws SpecError at
// the column of the offending argument (close_column: the ')' or, without parens, just
// past the name, for missing arguments). after_reduce: the stage follows a reduction over
// channels.
Op build_op(std::string_view name, int name_column, OpKind kind, std::vector<Arg> args, int close_column,
            bool after_reduce);

}  // namespace fusetune::spec::detail
