#pragma once
// `fusetune export`: a stored winner as something to ship. Pure functions of the problem and
// the winner record (no database, no GPU): the CLI looks the winner up, these render it.
//   export_cu     a self-contained .cu: header comment, the generated kernels verbatim, launch
//                 configurations and one host function that runs the plan
//   export_ptx    the winner's PTX (recompiled with NVRTC when the record holds none)
//   export_cubin  the winner's CUBIN bytes (likewise)
//   export_torch  a Python module with `class Model(nn.Module)` that runs the plan from PyTorch
//                 (cuDNN convs through torch, the kernels through CuPy); for the KernelBench
//                 presets it has the reference model's constructor and parameter names
// Errors: a winner whose problem differs from `problem`, whose variant JSON does not parse, or
// whose plan is unsound for the problem (codegen::check_variant), throws InputError (exit 2); a winner with no generated kernels has no PTX/CUBIN:
// NotFoundError (exit 4).
#include <string>

#include "db/records.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

[[nodiscard]] std::string export_cu(const spec::Problem& problem, const db::WinnerRecord& winner);
[[nodiscard]] std::string export_ptx(const spec::Problem& problem, const db::WinnerRecord& winner);
[[nodiscard]] std::string export_cubin(const spec::Problem& problem, const db::WinnerRecord& winner);
[[nodiscard]] std::string export_torch(const spec::Problem& problem, const db::WinnerRecord& winner);

}  // namespace fusetune::exporter
