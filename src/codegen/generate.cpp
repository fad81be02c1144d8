#include "codegen/generate.hpp"

#include <set>

#include "codegen/candidates.hpp"
#include "codegen/generate_parts.hpp"
#include "codegen/planted.hpp"
#include "common/error.hpp"
#include "spec/support.hpp"

namespace fusetune::codegen {

namespace {

void check_operands(const std::vector<spec::Op>& ops, int num_params, bool after_reduce) {
  for (const auto& op : ops) {
    for (const auto& a : op.args) {
      if (!a.per_channel) continue;
      if (after_reduce) {
        throw InputError("op " + op_text(op) + " after the reduction has a per-channel operand; only scalars fit there");
      }
      if (a.param_index < 0 || a.param_index >= num_params) {
        throw InputError("op " + op_text(op) + " names param[" + std::to_string(a.param_index) + "] but the problem has " +
                         std::to_string(num_params) + " per-channel parameter(s)");
      }
    }
  }
}

void check_problem(const spec::Problem& p) {
  if (!p.reduce && !p.post.empty()) throw InputError("ops after the reduction, but the problem has no reduction");
  check_operands(p.pre, p.num_params, false);
  check_operands(p.post, p.num_params, true);
}

}  // namespace

std::vector<Variant> generate_variants(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                       const GenerateOptions& options) {
  spec::require_tunable(problem);
  // Version 2: generate_model.cpp's candidates (no planted variants yet).
  if (!problem.is_conv2d_chain()) return generate_model_variants(problem, limits, options);
  check_problem(problem);
  const Shape s = shape_of(problem);
  std::vector<Variant> all;
  const GenerateInput in{problem, s, limits, options};
  for (const CandidateInfo& c : candidate_table())
    for (auto& v : c.generate(in)) all.push_back(std::move(v));
  for (auto& v : planted_variants(problem, all, options.plant)) all.push_back(std::move(v));

  // Names are the variants' identity everywhere (database, CLI): a clash is a codegen bug.
  std::set<std::string> names;
  for (const auto& v : all) {
    if (!names.insert(v.name).second) throw Error(ExitCode::failure, "codegen produced two variants named " + v.name);
  }
  return all;
}

}  // namespace fusetune::codegen
