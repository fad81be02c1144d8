// export_model_torch: a version-2 winner (any main operator but a conv2d chain's, then stage
// kernels) as a Python module, from export_templates/torch_model.py.in with both runtimes
// inlined (torch_runtime.py.in: the driver calls and the CUBIN loader; torch_model_runtime.py.in:
// the plan's steps and the replay of the reference model's parameters). The init file (units,
// bind) says how the reference model made its parameters; without it a module could not hold
// the reference's values.
#include <fmt/format.h>

#include "codegen/model_buffers.hpp"
#include "common/error.hpp"
#include "export/export.hpp"
#include "export/plan_buffers.hpp"
#include "export/plan_text.hpp"
#include "export/python_literal.hpp"
#include "export/summary.hpp"
#include "export/template_fill.hpp"
#include "export/torch_op.hpp"
#include "export/winner.hpp"
#include "spec/canonical.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::exporter {
namespace {

std::vector<int64_t> buffer_shape(const codegen::Buffer& b) {
  std::vector<int64_t> shape;
  for (const auto& [name, extent] : b.dims) shape.push_back(extent);
  return shape;
}

// (argument index, shape) of every forward argument the plan reads: x, and inputs bound by BIND.
std::string input_shapes(const spec::Problem& p, const codegen::Variant& v, const InitRecipe& init) {
  std::vector<std::string> items = {fmt::format("(0, {})", py_tuple(codegen::main_input_shape(p)))};
  for (const auto& [buffer, where] : init.bind) {
    if (buffer == "x" || !where.starts_with("input:")) continue;
    const auto r = v.find_buffer(buffer);
    items.push_back(fmt::format("({}, {})", where.substr(6), py_tuple(buffer_shape(v.buffer(*r)))));
  }
  return py_list(items);
}

// The conv's geometry as torch.nn.functional takes it (per spatial dim, outermost first).
std::string main_literal(const spec::Problem& p) {
  if (!p.is_conv()) return "{}";
  const spec::Conv& c = p.conv;
  const bool three = p.main == spec::MainKind::conv3d || p.main == spec::MainKind::conv_transpose3d;
  auto dims = [&](int64_t d, int64_t h, int64_t w) {
    return three ? py_tuple({d, h, w}) : py_tuple({h, w});
  };
  return fmt::format(
      "{{\n    \"input_shape\": {},\n    \"weight_shape\": {},\n    \"stride\": {},\n    \"padding\": {},\n"
      "    \"output_padding\": {},\n    \"dilation\": {},\n    \"groups\": {},\n}}",
      py_tuple(codegen::main_input_shape(p)), py_tuple(codegen::main_weight_shape(p)),
      dims(c.stride_d, c.stride_h, c.stride_w), dims(c.pad_d, c.pad_h, c.pad_w),
      dims(c.out_pad_d, c.out_pad_h, c.out_pad_w), dims(c.dil_d, c.dil_h, c.dil_w), c.groups);
}

std::string bind_literal(const InitRecipe& init) {
  std::string out = "{\n";
  for (const auto& [buffer, where] : init.bind) out += fmt::format("    {}: {},\n", py_str(buffer), py_str(where));
  return out + "}";
}

std::string buffer_floats(const codegen::Variant& v) {
  std::string out = "{\n";
  for (const auto& b : v.buffers) out += fmt::format("    {}: {},\n", py_str(b.name), b.floats());
  return out + "}";
}

}  // namespace

std::string export_model_torch(const spec::Problem& problem, const db::WinnerRecord& winner, TorchFlavor flavor,
                               const std::string& init_text, const std::string& init_path) {
  check_winner_problem(problem, winner);
  const codegen::Variant v = winner_variant(problem, winner, /*model_plans=*/true);
  if (!v.model_plan())
    throw InputError(fmt::format("--init is for version-2 problems; {} is a conv2d chain, exported without it",
                                 spec::canonical(problem)));
  const InitRecipe init = parse_init_recipe(init_text, init_path, v);
  const std::string cubin = v.source.empty() ? std::string() : variant_cubin(v, winner);
  std::map<std::string, std::string> values = plan_literals(v, winner, cubin);
  values["HEADER"] = without_last_newline(comment_block(summary_lines(problem, winner, v), "# "));
  values["PLAN"] = without_last_newline(
      comment_block(plan_lines(problem, winner, v, plan_buffers(v), "through torch.nn.functional"), "# "));
  values["FORMAT"] = flavor == TorchFlavor::kernelbench ? "kernelbench" : "torch";
  values["CLASS"] = flavor == TorchFlavor::kernelbench ? "ModelNew" : "Model";
  values["PROBLEM"] = py_str(spec::canonical(problem));
  values["MATH"] = py_str(winner.math);
  values["INPUT_SHAPES"] = input_shapes(problem, v, init);
  values["OUTPUT_SHAPE"] = py_tuple(spec::out_shape(problem));
  values["MAIN"] = main_literal(problem);
  values["UNITS"] = init.units_literal;
  values["BIND"] = bind_literal(init);
  values["BUFFER_FLOATS"] = buffer_floats(v);
  values["RUNTIME"] = torch_runtime();
  values["MODEL_RUNTIME"] = template_block("torch_model_runtime.py.in");
  return fill_template(export_template("torch_model.py.in"), values);
}

}  // namespace fusetune::exporter
