// libFuzzer target for the spec parser: any byte string either parses or throws
// SpecError, and whatever parses survives the canonical round trip unchanged and
// satisfies the invariants the rest of fusetune relies on (codegen, references and
// the tuner take a parsed Problem as valid without checking it again).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "spec/canonical.hpp"
#include "spec/ops.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace {

using namespace fusetune::spec;

[[noreturn]] void fail(const char* what, std::string_view input, const std::string& detail) {
  std::fprintf(stderr, "fuzz_spec: %s\n  input: %.*s\n  detail: %s\n", what, static_cast<int>(input.size()),
               input.data(), detail.c_str());
  std::abort();
}

void check_ops(const std::vector<Op>& ops, bool after_reduce, int& next_param, std::string_view input) {
  for (const Op& op : ops) {
    const OpInfo& info = op_info(op.kind);
    if (op.args.size() != static_cast<std::size_t>(info.max_args)) fail("defaults not filled", input, "");
    for (const Operand& arg : op.args) {
      if (!arg.per_channel) continue;
      if (after_reduce || !info.allows_param) fail("param[k] where it is not allowed", input, "");
      if (arg.param_index != next_param++) fail("param indices out of order", input, "");
    }
    if ((op.kind == OpKind::clamp || op.kind == OpKind::hardtanh) && op.args[0].value > op.args[1].value) {
      fail("lo > hi accepted", input, "");
    }
  }
}

// The general form (version 2): shapes follow through every stage within the size bound,
// parameters and inputs are numbered in order and each has a shape, named values are defined
// before use.
void check_general(const Problem& p, std::string_view input) {
  std::vector<Shape> shapes;
  try {
    shapes = epilogue_shapes(p);
  } catch (const std::exception& e) {
    fail("a parsed problem's shapes do not follow", input, e.what());
  }
  for (const Shape& s : shapes) {
    if (s.empty() && &s == &shapes.front()) fail("empty main shape", input, "");
    for (int64_t d : s) {
      if (d < 1) fail("an empty dim accepted", input, shape_text(s));
    }
    if (elems(s) > kMaxTensorElems) fail("a value past 2^40 elements accepted", input, shape_text(s));
  }
  if (static_cast<std::size_t>(p.num_params) != p.param_shapes.size()) fail("num_params != param_shapes", input, "");
  int values = 0, next_param = 0;
  for (const Stage& st : p.stages) {
    if (st.kind == StageKind::name && st.value_index != values++) fail("values out of order", input, "");
    if (st.kind == StageKind::norm && st.affine && (st.weight_param != next_param++ || st.bias_param != next_param++)) {
      fail("norm parameters out of order", input, "");
    }
    if (st.kind != StageKind::op) continue;
    for (const Operand& a : st.op.args) {
      if (a.value_index >= values) fail("a value used before it is named", input, "");
      if (a.per_channel && a.param_index != next_param++) fail("param indices out of order", input, "");
      if (a.input_index >= static_cast<int>(p.input_shapes.size())) fail("an input without a shape", input, "");
    }
  }
  if (next_param != p.num_params) fail("num_params does not match the operands", input, "");
  if (values != p.num_values) fail("num_values does not match the names", input, "");
}

void check_invariants(const Problem& p, std::string_view input) {
  if (!p.stages.empty()) {
    if (!p.pre.empty() || p.reduce || !p.post.empty()) fail("both forms filled", input, "");
    check_general(p, input);
    return;
  }
  if (!p.param_shapes.empty() || !p.input_shapes.empty()) fail("chain form with general operands", input, "");
  const Conv& c = p.conv;
  if (c.o() < 1 || c.p() < 1 || c.q() < 1) fail("empty conv output accepted", input, "");
  // (h + 2*pad - reach) must be >= 0: p() truncates toward zero, so p() >= 1 alone is not enough.
  if (!c.transposed && (c.h + 2 * c.pad_h - c.dil_h * (c.r - 1) - 1 < 0 || c.w + 2 * c.pad_w - c.dil_w * (c.s - 1) - 1 < 0 ||
                        c.d + 2 * c.pad_d - c.dil_d * (c.t - 1) - 1 < 0)) {
    fail("window larger than the padded input accepted", input, "");
  }
  for (int64_t e : {c.input_elems(), c.weight_elems(), c.conv_out_elems(), p.out_elems()}) {
    if (e < 1 || e > kMaxTensorElems) fail("tensor size out of range accepted", input, "");
  }
  int next_param = 0;
  check_ops(p.pre, false, next_param, input);
  check_ops(p.post, true, next_param, input);
  if (next_param != p.num_params) fail("num_params does not match the operands", input, "");
  if (!p.reduce && !p.post.empty()) fail("post ops without a reduction", input, "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Problem problem;
  try {
    problem = parse(input);
  } catch (const SpecError&) {
    return 0;  // rejecting the input is the expected outcome for most bytes
  } catch (const std::exception& e) {
    fail("parse threw something other than SpecError", input, e.what());
  } catch (...) {
    fail("parse threw a non-exception", input, "");
  }
  check_invariants(problem, input);
  const std::string once = canonical(problem);
  std::string twice;
  try {
    twice = canonical(parse(once));
  } catch (const std::exception& e) {
    fail("the canonical form does not parse", input, once + " -> " + e.what());
  }
  if (once != twice) fail("canonical round trip changed the spec", input, once + " -> " + twice);
  if (problem_key(problem).size() != 16) fail("key is not 16 hex digits", input, once);
  return 0;
}
