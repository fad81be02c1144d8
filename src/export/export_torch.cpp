// export_torch: the winner as a Python module with `class Model(nn.Module)`, made from
// export_templates/torch_module.py.in. The template holds all the Python; this file only
// renders the values it is filled with (problem, plan, source, constructor signature).
//
// How the module gets its kernels depends on the variant. Most compile SOURCE once per device
// through CuPy (NVRTC), which picks the device's architecture itself (sm_90). An arch-specific
// variant (Variant::arch_specific: wgmma) builds for sm_90a only, which CuPy never asks for, so
// its module carries the record's CUBIN instead (base64 in string literals, like every value
// from the database) and loads that, on a GPU of the record's compute capability only. The
// template has a block for each way: lines between "#@source" and "#@end" are kept for the
// former, lines between "#@cubin" and "#@end" for the latter; the marker lines never reach the
// module, so the modules of other variants are what they were before the CUBIN way existed.
#include <map>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "codegen/compile_target.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "db/base64.hpp"
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

// The CUBIN's base64 as string literals, one per line, which the template joins (in parentheses,
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

// The template with the lines of the way this module does not take removed, and every marker
// line: see the comment at the top. Markers that do not pair up are the template's fault.
std::string select_blocks(std::string_view text, bool cubin) {
  std::string out;
  std::string_view open;  // the block we are in: "" (none), "#@source" or "#@cubin"
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eol = text.find('\n', pos);
    const size_t end = eol == std::string_view::npos ? text.size() : eol + 1;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end;
    std::string_view marker = line;
    while (!marker.empty() && (marker.front() == ' ')) marker.remove_prefix(1);
    while (!marker.empty() && (marker.back() == '\n' || marker.back() == ' ')) marker.remove_suffix(1);
    if (marker == "#@source" || marker == "#@cubin") {
      if (!open.empty()) throw Error(ExitCode::failure, fmt::format("torch template: {} inside {}", marker, open));
      open = marker == "#@source" ? "#@source" : "#@cubin";
      continue;
    }
    if (marker == "#@end") {
      if (open.empty()) throw Error(ExitCode::failure, "torch template: #@end outside a block");
      open = "";
      continue;
    }
    if (open.empty() || (open == "#@cubin") == cubin) out += line;
  }
  if (!open.empty()) throw Error(ExitCode::failure, fmt::format("torch template: {} is not closed", open));
  return out;
}

// The record's GPU architecture ("sm_90"), to which an arch-specific winner's CUBIN is tied.
std::string record_arch(const codegen::Variant& v, const db::WinnerRecord& w) {
  if (w.env.cc_major < 1 || w.env.cc_major > 20 || w.env.cc_minor < 0 || w.env.cc_minor > 9) {
    throw InputError(fmt::format("the winner {} is arch-specific but records no valid GPU architecture (compute "
                                 "capability {}.{})",
                                 v.name, w.env.cc_major, w.env.cc_minor));
  }
  return w.env.arch();
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
  for (const auto& st : v.plan) {
    if (st.kind() == codegen::StepKind::cudnn_graph)
      throw NotFoundError(fmt::format(
          "the winner {} runs cuDNN's fused graph (runtime fusion), which the PyTorch module cannot run yet: use "
          "--format cu, whose plan lists the graph and its engine configuration",
          v.name));
  }
  const auto buffers = plan_buffers(v);
  const TorchSignature sig = torch_signature(problem);
  const spec::Conv& c = problem.conv;

  std::map<std::string, std::string> values = {
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
      {"VARIANT_JSON", py_long_text(variant_json(v))},
      {"SOURCE", py_long_text(v.source)},
  };
  if (!v.arch_specific) {
    values["NVRTC_OPTIONS"] = nvrtc_options(winner);
    return fill_template(select_blocks(export_template("torch_module.py.in"), false), values);
  }
  // CuPy cannot compile SOURCE for the target these kernels need: the module ships the CUBIN.
  const std::string arch = codegen::compile_arch(v, record_arch(v, winner));
  if (winner.cubin.empty()) {
    throw NotFoundError(fmt::format(
        "the winner {} stores no CUBIN, which --format torch needs for it: its kernels build for {} only, which "
        "CuPy cannot compile for (tune the problem again to store one, or use --format cu and nvcc {})",
        v.name, arch, codegen::nvcc_arch_flag(v, winner.env.arch())));
  }
  values["CUBIN_ARCH"] = py_str(arch);
  values["CUBIN_CC"] = py_tuple({winner.env.cc_major, winner.env.cc_minor});
  values["CUBIN_BASE64"] = cubin_base64_lines(winner.cubin);
  return fill_template(select_blocks(export_template("torch_module.py.in"), true), values);
}

}  // namespace fusetune::exporter
