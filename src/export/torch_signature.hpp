#pragma once
// The constructor of the exported PyTorch Model. For a problem equal to a KernelBench preset it
// is the reference model's own (same arguments in the same order, same parameter names), so the
// reference's state_dict() loads into it and `Model(*get_init_inputs())` works as in KernelBench;
// any other problem gets `Model()` with parameters param0, param1, ...
#include <string>
#include <utility>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::exporter {

struct TorchSignature {
  std::string preset;  // "kernelbench-31", ... or "" for the generic constructor
  // Constructor arguments after self, with the value the kernels were tuned for, as Python
  // literals: the module checks the arguments against them.
  std::vector<std::pair<std::string, std::string>> init_args;
  // Attribute names of the per-channel parameters (each (K, 1, 1)), in chan order.
  std::vector<std::string> param_names;
};

[[nodiscard]] TorchSignature torch_signature(const spec::Problem& problem);

}  // namespace fusetune::exporter
