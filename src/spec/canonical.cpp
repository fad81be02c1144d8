#include "spec/canonical.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "common/fnv1a.hpp"
#include "spec/ops.hpp"

namespace fusetune::spec {
namespace {

// `2` when both dims agree, else `2x1` (h x w).
std::string pair(int64_t h, int64_t w) { return h == w ? fmt::format("{}", h) : fmt::format("{}x{}", h, w); }

// fmt's `{}` for double is the shortest string that reads back to the same value:
// 2.0 -> "2", 0.5 -> "0.5", 1e20 -> "1e+20"; the parser reads all of those.
std::string operand(const Operand& arg) { return arg.per_channel ? "param[k]" : fmt::format("{}", arg.value); }

void append_op(std::string& out, const Op& op) {
  out += " | ";
  out += op_info(op.kind).name;
  if (op.args.empty()) return;  // `relu`, not `relu()`
  out += '(';
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    if (i != 0) out += ',';
    out += operand(op.args[i]);
  }
  out += ')';
}

}  // namespace

std::string canonical(const Problem& problem) {
  const Conv& c = problem.conv;
  std::string out = fmt::format(
      "conv2d(n={},c={},h={},w={},k={},r={},s={},stride={},pad={},dilation={},bias={},in={},out={})", c.n, c.c,
      c.h, c.w, c.k, c.r, c.s, pair(c.stride_h, c.stride_w), pair(c.pad_h, c.pad_w), pair(c.dil_h, c.dil_w),
      c.bias ? "true" : "false", layout_name(c.in), layout_name(c.out));
  for (const Op& op : problem.pre) append_op(out, op);
  if (problem.reduce) {
    out += " | ";
    out += reduce_name(*problem.reduce);
    out += "(channel)";
  }
  for (const Op& op : problem.post) append_op(out, op);
  return out;
}

std::string problem_key(const Problem& problem) {
  return fmt::format("{:016x}", fnv1a64(canonical(problem)));
}

}  // namespace fusetune::spec
