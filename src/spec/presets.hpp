#pragma once
// Named problems (the KernelBench level-2 references) and the CLI's choice between a
// SPEC argument and --preset NAME.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec {

// The spec text of a preset, or nullopt for an unknown name.
std::optional<std::string> preset_spec(std::string_view name);

// All preset names: kernelbench-31, kernelbench-32.
const std::vector<std::string>& preset_names();

// Exactly one of spec_text and preset must be given. Throws InputError for an unknown
// preset or for both/neither, SpecError for a bad spec.
Problem resolve_problem(const std::optional<std::string>& spec_text, const std::optional<std::string>& preset);

}  // namespace fusetune::spec
