#pragma once
// One tuned winner as the Python literals of an `_Op` (export_templates/torch_runtime.py.in):
// the problem, the plan, the source and the CUBIN the op loads. The PyTorch exports are made of
// these: `--format torch` / `kernelbench` (one op behind a Model class) and `torch-patch` (one op
// per block of the user's model). Every value is a literal made here from checked data; text
// from the record reaches the module only inside string literals.
#include <map>
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "export/plan_buffers.hpp"
#include "db/records.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

struct TorchOp {
  codegen::Variant variant;
  std::vector<BufferInfo> buffers;  // plan_buffers(variant)
  // Placeholder name -> Python literal: PROBLEM, MATH, INPUT_SHAPE, INPUT_LAYOUT, OUTPUT_SHAPE,
  // CONV, BUFFER_FLOATS, VARIANT_JSON, SOURCE, CUBIN_ARCH, CUBIN_CC, CUBIN_BASE64.
  std::map<std::string, std::string> values;
};

// The winner's op. The CUBIN is the record's, or (a record without one) the source compiled
// again with NVRTC for the record's architecture, as export_cubin does. Refuses (NotFoundError,
// exit 4) a winner whose plan runs cuDNN's fused graph, which a PyTorch module cannot run, and
// (InputError) a record of another problem or without a valid GPU architecture.
[[nodiscard]] TorchOp torch_op(const spec::Problem& problem, const db::WinnerRecord& winner);

// The plan's literals every PyTorch export of `v` embeds: VARIANT_JSON (the variant without its
// source, one plan step per line), SOURCE, CUBIN_ARCH, CUBIN_CC, CUBIN_BASE64 (`cubin`'s base64,
// one string literal per line).
[[nodiscard]] std::map<std::string, std::string> plan_literals(const codegen::Variant& v, const db::WinnerRecord& winner,
                                                               const std::string& cubin);

// `_Op(problem=..., ...)` with the op's literals, as an expression indented by `indent` spaces
// after its first line.
[[nodiscard]] std::string op_constructor(const TorchOp& op, int indent);

// The runtime every PyTorch export embeds (export_templates/torch_runtime.py.in), verbatim.
[[nodiscard]] std::string torch_runtime();

}  // namespace fusetune::exporter
