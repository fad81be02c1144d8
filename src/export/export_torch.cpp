// export_torch: the winner as a Python module with a Model class (`--format torch`) or KernelBench's
// ModelNew (`--format kernelbench`), made from export_templates/torch_module.py.in with the
// runtime (torch_runtime.py.in) inlined. The templates hold all the Python; this file only renders
// the values they are filled with (the op's literals, torch_op.cpp; the constructor signature).
#include <map>

#include <fmt/format.h>

#include "export/export.hpp"
#include "export/plan_text.hpp"
#include "export/python_literal.hpp"
#include "export/summary.hpp"
#include "export/template_fill.hpp"
#include "export/torch_op.hpp"
#include "export/torch_signature.hpp"

namespace fusetune::exporter {
namespace {

std::string init_args(const TorchSignature& sig) {
  if (sig.init_args.empty()) return "[]";
  std::string out = "[\n";
  for (const auto& [name, value] : sig.init_args) out += fmt::format("    ({}, {}),\n", py_str(name), value);
  return out + "]";
}

// KernelBench constructs ModelNew(*get_init_inputs()). A problem that is no preset has no known
// constructor, so its ModelNew takes whatever the reference model takes and uses none of it: the
// shapes and constants are the spec's, which the kernels were tuned for (forward checks the input).
std::string init_params(const TorchSignature& sig, TorchFlavor flavor) {
  if (sig.init_args.empty() && flavor == TorchFlavor::kernelbench) return ", *init_inputs";
  std::string out;
  for (const auto& arg : sig.init_args) out += ", " + arg.first;
  return out;
}

std::string param_names(const TorchSignature& sig) {
  std::vector<std::string> items;
  for (const auto& name : sig.param_names) items.push_back(py_str(name));
  return py_list(items);
}

}  // namespace

std::string export_torch(const spec::Problem& problem, const db::WinnerRecord& winner, TorchFlavor flavor) {
  TorchOp op = torch_op(problem, winner);
  const codegen::Variant& v = op.variant;
  const TorchSignature sig = torch_signature(problem);
  std::map<std::string, std::string> values = std::move(op.values);
  values["HEADER"] = without_last_newline(comment_block(summary_lines(problem, winner, v), "# "));
  values["PLAN"] = without_last_newline(comment_block(
      plan_lines(problem, winner, v, op.buffers, "the op through torch.nn.functional.conv2d"), "# "));
  values["FORMAT"] = flavor == TorchFlavor::kernelbench ? "kernelbench" : "torch";
  values["CLASS"] = flavor == TorchFlavor::kernelbench ? "ModelNew" : "Model";
  values["PRESET"] = py_str(sig.preset);
  values["INIT_ARGS"] = init_args(sig);
  values["INIT_PARAMS"] = init_params(sig, flavor);
  values["PARAM_NAMES"] = param_names(sig);
  values["RUNTIME"] = torch_runtime();
  return fill_template(export_template("torch_module.py.in"), values);
}

}  // namespace fusetune::exporter
