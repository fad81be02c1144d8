#pragma once
// Which problems the tuner has candidates for today. The spec language (version 2) describes
// every KernelBench level-2 problem: conv2d chains take every design; every other problem
// (conv3d, the transposed convs, grouped convs, linear/matmul, general epilogues) takes the
// floor and `unfused` (codegen::generate_model_variants), channels-first only
// (docs/spec-language.md, "What tune takes today"). One place, so `tune`, `compile` and
// generate_variants refuse the same problems with the same line.
#include <optional>
#include <string>

#include "spec/problem.hpp"

namespace fusetune::spec {

// Why `tune` and `compile` cannot take the problem yet, or nullopt when they can.
std::optional<std::string> why_not_tunable(const Problem& problem);

// Throws InputError (exit code 2) with why_not_tunable's line.
void require_tunable(const Problem& problem);

}  // namespace fusetune::spec
