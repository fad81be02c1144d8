#pragma once
// `fusetune export`: a stored winner as something to ship. Pure functions of the problem and
// the winner record (no database, no GPU): the CLI looks the winner up, these render it.
//   export_cu     a self-contained .cu: header comment, the generated kernels verbatim, launch
//                 configurations and one host function that runs the plan
//   export_ptx    the winner's PTX (recompiled with NVRTC when the record holds none)
//   export_cubin  the winner's CUBIN bytes (likewise)
//   export_torch  a Python module with `class Model(nn.Module)` (TorchFlavor::kernelbench:
//                 `class ModelNew`, as KernelBench's harness loads it) whose forward() is one
//                 PyTorch custom op running the plan: cuDNN convs through torch, the kernels from
//                 the CUBIN through cuda-python; for the KernelBench presets it has the reference
//                 model's constructor and parameter names
//   export_torch_patch  a Python module with patch(model) / unpatch(model) that swaps each block
//                 of a spec file written by `fusetune from-torch` for its tuned op
// Errors: a winner whose problem differs from `problem`, whose variant JSON does not parse, or
// whose plan is unsound for the problem (codegen::check_variant), throws InputError (exit 2); a winner with no generated kernels has no PTX/CUBIN:
// NotFoundError (exit 4).
#include <string>
#include <vector>

#include "db/records.hpp"
#include "export/init_recipe.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

[[nodiscard]] std::string export_cu(const spec::Problem& problem, const db::WinnerRecord& winner);
[[nodiscard]] std::string export_ptx(const spec::Problem& problem, const db::WinnerRecord& winner);
[[nodiscard]] std::string export_cubin(const spec::Problem& problem, const db::WinnerRecord& winner);
enum class TorchFlavor { torch, kernelbench };
[[nodiscard]] std::string export_torch(const spec::Problem& problem, const db::WinnerRecord& winner,
                                       TorchFlavor flavor = TorchFlavor::torch);

// A version-2 winner (codegen/generate_model.cpp's plans: a GEMM or N-d conv step through
// torch.nn.functional, then stage kernels from the CUBIN) as a Python module (`class Model`, or
// ModelNew for TorchFlavor::kernelbench) that rebuilds the reference model's parameters from the
// init file's units (init_recipe.hpp; `init_path` names it in messages). InputError for a conv2d
// chain (export_torch exports those), an unsound record or init file.
[[nodiscard]] std::string export_model_torch(const spec::Problem& problem, const db::WinnerRecord& winner,
                                             TorchFlavor flavor, const std::string& init_text,
                                             const std::string& init_path);

// One block of the user's model, as `fusetune from-torch` recorded it beside its spec line
// (`#@block {JSON}`: the conv's module path, the graph nodes the block replaces, the node whose
// value it computes, where each per-channel operand comes from), with its tuned winner.
struct PatchBlock {
  size_t line = 0;  // of the spec file
  spec::Problem problem;
  db::WinnerRecord winner;
  std::string block_json;  // the record as from-torch wrote it: checked and rewritten here
};
[[nodiscard]] std::string export_torch_patch(const std::vector<PatchBlock>& blocks, const std::string& spec_file);

}  // namespace fusetune::exporter
