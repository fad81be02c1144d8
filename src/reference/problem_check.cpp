#include "reference/problem_check.hpp"

#include <string>

#include "common/error.hpp"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

void check_ops(const std::vector<spec::Op>& ops, int num_params, bool after_reduce) {
  for (const spec::Op& op : ops) {
    // Operands an op cannot do without; the optional ones take PyTorch's defaults (spec::op_info).
    const spec::OpInfo& info = spec::op_info(op.kind);
    const std::string name(info.name);
    if (op.args.size() < size_t(info.min_args)) {
      throw InputError("op " + name + " needs " + std::to_string(info.min_args) + " operand(s), has " +
                       std::to_string(op.args.size()));
    }
    for (const spec::Operand& a : op.args) {
      if (!a.per_channel) continue;
      if (after_reduce) {
        throw InputError("op " + name + " after the channel reduction has a per-channel operand");
      }
      if (a.param_index < 0 || a.param_index >= num_params) {
        throw InputError("op " + name + " uses param[" + std::to_string(a.param_index) + "], but " +
                         std::to_string(num_params) + " per-channel parameter(s) are declared");
      }
    }
  }
}

}  // namespace

void check_problem(const spec::Problem& p) {
  const spec::Conv& c = p.conv;
  if (c.n < 1 || c.c < 1 || c.h < 1 || c.w < 1 || c.k < 1 || c.r < 1 || c.s < 1) {
    throw InputError("conv extents n, c, h, w, k, r, s must all be >= 1");
  }
  if (c.stride_h < 1 || c.stride_w < 1 || c.dil_h < 1 || c.dil_w < 1 || c.pad_h < 0 || c.pad_w < 0) {
    throw InputError("conv stride and dilation must be >= 1 and padding >= 0");
  }
  if (c.h + 2 * c.pad_h < c.dil_h * (c.r - 1) + 1 || c.w + 2 * c.pad_w < c.dil_w * (c.s - 1) + 1) {
    throw InputError("conv window is larger than the padded input: the output would be empty");
  }
  if (p.num_params < 0) throw InputError("num_params must be >= 0");
  check_ops(p.pre, p.num_params, false);
  check_ops(p.post, p.num_params, true);
}

}  // namespace fusetune::reference
