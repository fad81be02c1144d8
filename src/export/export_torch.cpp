// export_torch: the winner as a Python module with `class Model(nn.Module)`, made from
// export_templates/torch_module.py.in. The template holds all the Python; this file only
// renders the values it is filled with (problem, plan, source, constructor signature).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "codegen/variant_json.hpp"
#include "export/export.hpp"
#include "export/plan_buffers.hpp"
#include "export/plan_text.hpp"
#include "export/python_literal.hpp"
#include "export/summary.hpp"
#include "export/template_fill.hpp"
#include "export/torch_signature.hpp"
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

std::string init_args(const TorchSignature& sig) {
  if (sig.init_args.empty()) return "[]";
  std::string out = "[\n";
  for (const auto& [name, value] : sig.init_args) out += fmt::format("    ({}, {}),\n", py_str(name), value);
  return out + "]";
}

std::string init_params(const TorchSignature& sig) {
  std::string out;
  for (const auto& arg : sig.init_args) out += ", " + arg.first;
  return out;
}

std::string param_names(const TorchSignature& sig) {
  std::vector<std::string> items;
  for (const auto& name : sig.param_names) items.push_back(py_str(name));
  return py_list(items);
}

std::string buffer_floats(const std::vector<BufferInfo>& buffers) {
  std::string out = "{\n";
  for (const auto& b : buffers) out += fmt::format("    {}: {},\n", py_str(b.name), b.floats);
  return out + "}";
}

std::string nvrtc_options(const db::WinnerRecord& w) {
  // As the tuner compiled the kernels (gpu/compiler.cpp): C++17, and --fmad=false under strict
  // fp32 so products round before they are added. CuPy adds the architecture itself.
  return w.math == "fp32" ? R"(("-std=c++17", "--fmad=false"))" : R"(("-std=c++17",))";
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

// The template puts each comment block on lines of its own.
std::string without_last_newline(std::string text) {
  if (text.ends_with('\n')) text.pop_back();
  return text;
}

}  // namespace

std::string export_torch(const spec::Problem& problem, const db::WinnerRecord& winner) {
  check_winner_problem(problem, winner);
  const codegen::Variant v = winner_variant(problem, winner);
  const auto buffers = plan_buffers(v);
  const TorchSignature sig = torch_signature(problem);
  const spec::Conv& c = problem.conv;

  const std::map<std::string, std::string> values = {
      {"HEADER", without_last_newline(comment_block(summary_lines(problem, winner, v), "# "))},
      {"PLAN", without_last_newline(comment_block(
                   plan_lines(problem, winner, v, buffers, "Model.forward through torch.nn.functional.conv2d"), "# "))},
      {"PROBLEM", py_str(spec::canonical(problem))},
      {"MATH", py_str(winner.math)},
      {"PRESET", py_str(sig.preset)},
      {"INPUT_SHAPE", py_tuple({c.n, c.c, c.h, c.w})},
      {"INPUT_LAYOUT", py_str(c.in == spec::Layout::nhwc ? "nhwc" : "nchw")},
      {"OUTPUT_SHAPE", py_tuple({c.n, problem.out_channels(), c.p(), c.q()})},
      {"CONV", conv_kwargs(c)},
      {"INIT_ARGS", init_args(sig)},
      {"INIT_PARAMS", init_params(sig)},
      {"PARAM_NAMES", param_names(sig)},
      {"BUFFER_FLOATS", buffer_floats(buffers)},
      {"NVRTC_OPTIONS", nvrtc_options(winner)},
      {"VARIANT_JSON", py_long_text(variant_json(v))},
      {"SOURCE", py_long_text(v.source)},
  };
  return fill_template(export_template("torch_module.py.in"), values);
}

}  // namespace fusetune::exporter
