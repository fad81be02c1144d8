#include "spec/op_args.hpp"

#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "spec/ops.hpp"
#include "spec/parser.hpp"

namespace fusetune::spec::detail {
namespace {

// Names of the arguments, for messages that say what an op expects.
std::string_view arg_names(OpKind kind) {
  switch (kind) {
    case OpKind::clamp:
    case OpKind::hardtanh: return " (lo, hi)";
    case OpKind::leaky_relu: return " (slope)";
    case OpKind::softplus: return " (beta, threshold)";
    default: return "";
  }
}

std::string count_phrase(int lo, int hi) {
  if (hi == 0) return "no arguments";
  if (lo == hi) return fmt::format("{} argument{}", lo, lo == 1 ? "" : "s");
  return fmt::format("{} to {} arguments", lo, hi);
}

// `sub(1.5, x)` means 1.5 - x: rewrite the binary ops written with an explicit `x`
// into the one-operand form (rsub(1.5)), so each problem has one canonical spelling.
void resolve_operand_order(std::string_view name, int name_column, OpKind& kind, std::vector<Arg>& args) {
  std::size_t x_count = 0;
  int x_column = 0;
  for (const Arg& arg : args) {
    if (arg.kind == Arg::Kind::x && x_count++ == 0) x_column = arg.column;
  }
  if (x_count == 0) return;
  const auto operand_first = operand_first_form(kind);
  if (!operand_first) {
    throw SpecError(x_column, fmt::format("'{}' does not take 'x'; only add, sub, mul, div, min and max "
                                          "name the operand order, as in sub(1.5, x)",
                                          name));
  }
  if (x_count != 1 || args.size() != 2) {
    throw SpecError(name_column, fmt::format("'{0}' with 'x' takes one operand and one x, as in {0}(x, 1.5) "
                                             "or {0}(1.5, x)",
                                             name));
  }
  if (args[1].kind == Arg::Kind::x) {
    kind = *operand_first;
    args.pop_back();
  } else {
    args.erase(args.begin());
  }
}

void check_count(const OpInfo& info, const std::vector<Arg>& args, int close_column) {
  const int count = static_cast<int>(args.size());
  if (count > info.max_args) {
    throw SpecError(args[static_cast<std::size_t>(info.max_args)].column,
                    fmt::format("'{}' takes {}{}, found {}", info.name, count_phrase(info.min_args, info.max_args),
                                arg_names(info.kind), count));
  }
  // hardtanh's bounds come as a pair: one alone would silently pair with a default.
  const bool lone_bound = info.kind == OpKind::hardtanh && count == 1;
  if (count < info.min_args || lone_bound) {
    const std::string expected = lone_bound ? "0 or 2 arguments" : count_phrase(info.min_args, info.max_args);
    throw SpecError(close_column,
                    fmt::format("'{}' takes {}{}, found {}", info.name, expected, arg_names(info.kind), count));
  }
}

void check_values(const Op& op, const std::vector<Arg>& written) {
  // Defaults always pass these checks, so a failing value was written.
  const int column = written.empty() ? 0 : written[0].column;
  if ((op.kind == OpKind::clamp || op.kind == OpKind::hardtanh) && op.args[0].value > op.args[1].value) {
    throw SpecError(column, fmt::format("'{}' needs lo <= hi, found lo={} hi={}", op_info(op.kind).name,
                                        op.args[0].value, op.args[1].value));
  }
  // beta divides: softplus(x) = log(1 + exp(beta*x)) / beta.
  if (op.kind == OpKind::softplus && !(op.args[0].value > 0.0)) {
    throw SpecError(column, fmt::format("'softplus' needs beta > 0, found {}", op.args[0].value));
  }
}

}  // namespace

Op build_op(std::string_view name, int name_column, OpKind kind, std::vector<Arg> args, int close_column,
            bool after_reduce) {
  resolve_operand_order(name, name_column, kind, args);
  const OpInfo& info = op_info(kind);
  check_count(info, args, close_column);
  Op op{kind, {}};
  for (const Arg& arg : args) {
    if (arg.kind == Arg::Kind::param && !info.allows_param) {
      throw SpecError(arg.column, fmt::format("'{}' takes scalar arguments; param[k] is for add, sub, rsub, "
                                              "mul, div, rdiv, min and max",
                                              info.name));
    }
    if ((arg.kind == Arg::Kind::value || arg.kind == Arg::Kind::input) && !info.allows_param) {
      throw SpecError(arg.column, fmt::format("'{}' takes scalar arguments; named values and inputs are operands "
                                              "of add, sub, rsub, mul, div, rdiv, min and max",
                                              info.name));
    }
    if (arg.kind == Arg::Kind::param && after_reduce && !arg.scalar_param) {
      throw SpecError(arg.column, "param[k] after the channel reduction: one channel is left, so use a scalar");
    }
    op.args.push_back(arg.operand);
  }
  for (std::size_t i = op.args.size(); i < info.defaults.size(); ++i) {
    op.args.push_back({false, info.defaults[i], -1});
  }
  check_values(op, args);
  return op;
}

}  // namespace fusetune::spec::detail
