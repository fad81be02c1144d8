#include "export/torch_op.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "codegen/compile_target.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "db/base64.hpp"
#include "export/export.hpp"
#include "export/plan_buffers.hpp"
#include "export/python_literal.hpp"
#include "export/template_fill.hpp"
#include "export/winner.hpp"
#include "spec/canonical.hpp"

namespace fusetune::exporter {
namespace {

std::string conv_kwargs(const spec::Conv& c) {
  return fmt::format(
      "dict(\n    in_channels={}, out_channels={}, kernel_size={},\n"
      "    stride={}, padding={}, dilation={}, bias={})",
      c.c, c.k, py_tuple({c.r, c.s}), py_tuple({c.stride_h, c.stride_w}), py_tuple({c.pad_h, c.pad_w}),
      py_tuple({c.dil_h, c.dil_w}), c.bias ? "True" : "False");
}

std::string buffer_floats(const std::vector<BufferInfo>& buffers) {
  std::string out = "{\n";
  for (const auto& b : buffers) out += fmt::format("    {}: {},\n", py_str(b.name), b.floats);
  return out + "}";
}

// The variant without its source (that is SOURCE), one plan step per line: readable, and still
// the JSON codegen::variant_from_json reads.
std::string variant_json(const codegen::Variant& v) {
  nlohmann::json j = codegen::to_json(v);
  j.erase("source");
  std::string out = "{\n";
  for (const auto& [key, value] : j.items()) {
    if (key == "plan") continue;
    out += fmt::format("  {}: {},\n", nlohmann::json(key).dump(), value.dump());
  }
  out += "  \"plan\": [\n";
  const auto& plan = j.at("plan");
  for (size_t i = 0; i < plan.size(); ++i) out += "    " + plan[i].dump() + (i + 1 < plan.size() ? ",\n" : "\n");
  return out + "  ]\n}";
}

// The CUBIN's base64 as string literals, one per line, which the module joins (in parentheses,
// as Python concatenates adjacent literals) and decodes.
std::string cubin_base64_lines(const std::string& cubin) {
  constexpr size_t kWidth = 100;
  const std::string b64 = db::base64_encode(cubin);
  std::string out;
  for (size_t i = 0; i < b64.size(); i += kWidth) {
    if (!out.empty()) out += '\n';
    out += "    " + py_str(b64.substr(i, kWidth));
  }
  return out;
}

}  // namespace

TorchOp torch_op(const spec::Problem& problem, const db::WinnerRecord& winner) {
  check_winner_problem(problem, winner);
  TorchOp op;
  op.variant = winner_variant(problem, winner);
  const codegen::Variant& v = op.variant;
  for (const auto& st : v.plan) {
    if (st.kind() == codegen::StepKind::cudnn_graph)
      throw NotFoundError(fmt::format(
          "the winner {} runs cuDNN's fused graph (runtime fusion), which the PyTorch module cannot run yet: use "
          "--format cu, whose plan lists the graph and its engine configuration",
          v.name));
  }
  // The kernels the plan launches, as the tuner compiled them: nothing compiles at import.
  const std::string cubin = v.source.empty() ? std::string() : export_cubin(problem, winner);
  op.buffers = plan_buffers(v);
  const spec::Conv& c = problem.conv;
  op.values = plan_literals(v, winner, cubin);
  op.values.insert({
      {"PROBLEM", py_str(spec::canonical(problem))},
      {"MATH", py_str(winner.math)},
      {"INPUT_SHAPE", py_tuple({c.n, c.c, c.h, c.w})},
      {"INPUT_LAYOUT", py_str(c.in == spec::Layout::nhwc ? "nhwc" : "nchw")},
      {"OUTPUT_SHAPE", py_tuple({c.n, problem.out_channels(), c.p(), c.q()})},
      {"CONV", conv_kwargs(c)},
      {"BUFFER_FLOATS", buffer_floats(op.buffers)},
  });
  return op;
}

std::map<std::string, std::string> plan_literals(const codegen::Variant& v, const db::WinnerRecord& winner,
                                                 const std::string& cubin) {
  return {
      {"VARIANT_JSON", py_long_text(variant_json(v))},
      {"SOURCE", py_long_text(v.source)},
      {"CUBIN_ARCH", py_str(codegen::compile_arch(v, record_arch(v, winner)))},
      {"CUBIN_CC", py_tuple({winner.env.cc_major, winner.env.cc_minor})},
      {"CUBIN_BASE64", cubin.empty() ? "    \"\"" : cubin_base64_lines(cubin)},
  };
}

std::string op_constructor(const TorchOp& op, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  // Multi-line literals (CONV, BUFFER_FLOATS) are indented with the call; raw text (source,
  // JSON) keeps its lines as they are, which Python allows inside brackets.
  auto indented = [&](const std::string& text) {
    std::string out;
    for (const char ch : text) {
      out += ch;
      if (ch == '\n') out += pad + "    ";
    }
    return out;
  };
  const auto& v = op.values;
  std::string out = "_Op(\n";
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"problem", "PROBLEM"}, {"math", "MATH"}, {"input_shape", "INPUT_SHAPE"},
           {"input_layout", "INPUT_LAYOUT"}, {"output_shape", "OUTPUT_SHAPE"}, {"conv", "CONV"},
           {"buffer_floats", "BUFFER_FLOATS"}, {"cubin_arch", "CUBIN_ARCH"}, {"cubin_cc", "CUBIN_CC"}}) {
    out += fmt::format("{}    {}={},\n", pad, key, indented(v.at(name)));
  }
  out += fmt::format("{}    variant=json.loads({}),\n", pad, v.at("VARIANT_JSON"));
  out += fmt::format("{}    source={},\n", pad, v.at("SOURCE"));
  out += fmt::format("{}    cubin=base64.b64decode(\n{}\n{}    ),\n", pad, v.at("CUBIN_BASE64"), pad);
  return out + pad + ")";
}

std::string torch_runtime() { return template_block("torch_runtime.py.in"); }

}  // namespace fusetune::exporter
