#include "spec/canonical.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/fnv1a.hpp"
#include "spec/main_parser.hpp"
#include "spec/ops.hpp"
#include "spec/stage_parser.hpp"

namespace fusetune::spec {
namespace {

// `2` when every part agrees, else `2x1` (h x w) or `2x1x1` (d x h x w).
std::string tuple(std::initializer_list<int64_t> parts) {
  const std::vector<int64_t> v(parts);
  for (int64_t x : v) {
    if (x != v[0]) return fmt::format("{}", fmt::join(v, "x"));
  }
  return fmt::format("{}", v[0]);
}

std::string conv_value(const Conv& c, std::string_view key, bool three) {
  auto t = [&](int64_t dd, int64_t hh, int64_t ww) { return three ? tuple({dd, hh, ww}) : tuple({hh, ww}); };
  if (key == "n") return fmt::format("{}", c.n);
  if (key == "c") return fmt::format("{}", c.c);
  if (key == "d") return fmt::format("{}", c.d);
  if (key == "h") return fmt::format("{}", c.h);
  if (key == "w") return fmt::format("{}", c.w);
  if (key == "k") return fmt::format("{}", c.k);
  if (key == "t") return fmt::format("{}", c.t);
  if (key == "r") return fmt::format("{}", c.r);
  if (key == "s") return fmt::format("{}", c.s);
  if (key == "groups") return fmt::format("{}", c.groups);
  if (key == "stride") return t(c.stride_d, c.stride_h, c.stride_w);
  if (key == "pad") return t(c.pad_d, c.pad_h, c.pad_w);
  if (key == "out_pad") return t(c.out_pad_d, c.out_pad_h, c.out_pad_w);
  if (key == "dilation") return t(c.dil_d, c.dil_h, c.dil_w);
  if (key == "bias") return c.bias ? "true" : "false";
  if (key == "in") return std::string(layout_name(c.in));
  return std::string(layout_name(c.out));
}

std::string gemm_value(const Gemm& g, std::string_view key) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  if (key == "batch") return fmt::format("{}", g.batch);
  if (key == "m") return fmt::format("{}", g.m);
  if (key == "k") return fmt::format("{}", g.k);
  if (key == "n") return fmt::format("{}", g.n);
  if (key == "bias") return b(g.bias);
  if (key == "trans_a") return b(g.trans_a);
  return b(g.trans_b);
}

std::string main_text(const Problem& p) {
  const bool three = p.main == MainKind::conv3d || p.main == MainKind::conv_transpose3d;
  std::string out = fmt::format("{}(", detail::main_name(p.main));
  bool first = true;
  for (const detail::MainKey& key : detail::main_keys(p.main)) {
    // conv2d prints groups only when it is not 1: version 1's texts (and keys) stay as they were.
    if (p.main == MainKind::conv2d && key.name == "groups" && p.conv.groups == 1) continue;
    out += first ? "" : ",";
    first = false;
    out += fmt::format("{}={}", key.name,
                       p.is_conv() ? conv_value(p.conv, key.name, three) : gemm_value(p.gemm, key.name));
  }
  return out + ")";
}

// fmt's `{}` for double is the shortest string that reads back to the same value:
// 2.0 -> "2", 0.5 -> "0.5", 1e20 -> "1e+20"; the parser reads all of those.
std::string operand(const Problem& p, const Operand& arg) {
  if (arg.value_index >= 0) return fmt::format("v{}", arg.value_index);
  if (arg.input_index >= 0) return fmt::format("input{}", arg.input_index + 1);
  if (arg.per_channel) {
    if (p.param_shapes.empty()) return "param[k]";
    for (int64_t x : p.param_shapes[std::size_t(arg.param_index)]) {
      if (x != 1) return "param[k]";
    }
    return "param[1]";
  }
  return fmt::format("{}", arg.value);
}

void append_op(std::string& out, const Problem& p, const Op& op) {
  out += " | ";
  out += op_info(op.kind).name;
  if (op.args.empty()) return;  // `relu`, not `relu()`
  out += '(';
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    if (i != 0) out += ',';
    out += operand(p, op.args[i]);
  }
  out += ')';
}

std::string dims_text(const Stage& st) {
  std::string out = st.dims == std::vector<int>{1} ? "channel" : fmt::format("{}", fmt::join(st.dims, ","));
  if (!st.keepdim) out += ",keepdim=false";
  return out;
}

std::string stage_text(const Problem& p, const Stage& st) {
  const auto b = [](bool v) { return v ? "true" : "false"; };
  switch (st.kind) {
    case StageKind::op: {
      std::string out;
      append_op(out, p, st.op);
      return out.substr(3);
    }
    case StageKind::name: return fmt::format("as v{}", st.value_index);
    case StageKind::reduce: return fmt::format("{}({})", reduce_name(st.reduce), dims_text(st));
    case StageKind::logsumexp: return fmt::format("logsumexp({})", dims_text(st));
    case StageKind::softmax: return fmt::format("softmax({})", st.dims.at(0));
    case StageKind::log_softmax: return fmt::format("log_softmax({})", st.dims.at(0));
    case StageKind::pool: {
      const auto n = std::size_t(st.pool_dims);
      auto part = [&](const std::array<int64_t, 3>& a) {
        return n == 1 ? tuple({a[0]}) : n == 2 ? tuple({a[0], a[1]}) : tuple({a[0], a[1], a[2]});
      };
      std::string out = fmt::format("{}(kernel={},stride={},pad={}", detail::pool_name(st), part(st.window),
                                    part(st.stride), part(st.pad));
      if (st.pool == PoolKind::avg) out += fmt::format(",count_include_pad={}", b(st.count_include_pad));
      return out + ")";
    }
    case StageKind::norm: {
      std::string out = fmt::format("{}(", detail::norm_name(st.norm));
      if (st.norm == NormKind::group) out += fmt::format("groups={},", st.groups);
      if (st.norm == NormKind::layer) out += fmt::format("dims={},", st.norm_dims);
      return out + fmt::format("eps={},affine={})", st.eps, b(st.affine));
    }
  }
  return "";
}

}  // namespace

std::string canonical(const Problem& problem) {
  std::string out = main_text(problem);
  for (const Op& op : problem.pre) append_op(out, problem, op);
  if (problem.reduce) {
    out += " | ";
    out += reduce_name(*problem.reduce);
    out += "(channel)";
  }
  for (const Op& op : problem.post) append_op(out, problem, op);
  for (const Stage& st : problem.stages) out += " | " + stage_text(problem, st);
  return out;
}

std::string problem_key(const Problem& problem) {
  return fmt::format("{:016x}", fnv1a64(canonical(problem)));
}

}  // namespace fusetune::spec
