#pragma once
// The init file of a version-2 export (`fusetune export --init FILE`): how the reference model
// made its parameters (units, in order) and which of them each plan buffer reads (bind). Written
// by the KernelBench client (python/fusetune_torch/init_recipe.py), which checks it by replaying
// it against the model; read here as untrusted input: every name, keyword and value is checked
// against short lists and reaches the module only as a literal. docs/commands.md, "export".
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::exporter {

struct InitRecipe {
  std::string units_literal;  // Python: [(name, kind, keywords or {"shape", "law", "scale"}), ...]
  // buffer name -> "input:<i>" | "<unit>" | "<unit>.weight" | "<unit>.bias", "x" first ("input:0")
  std::vector<std::pair<std::string, std::string>> bind;
};

// Parses and checks `text` (the file `path`, for messages) against the plan `v`: every buffer the
// plan reads from outside (weights, bias, param, extra) bound once, nothing else bound, each
// binding naming a unit of the right kind or a forward argument >= 1. InputError (exit 2) naming
// the first thing wrong.
// The nn classes a module unit may name, each with the constructor keywords it may carry, and the
// laws of a parameter unit: python/fusetune_torch/init_recipe.py writes the same lists (a test
// compares them).
[[nodiscard]] const std::map<std::string, std::set<std::string>>& init_unit_modules();
[[nodiscard]] const std::set<std::string>& init_unit_laws();

[[nodiscard]] InitRecipe parse_init_recipe(const std::string& text, const std::string& path,
                                           const codegen::Variant& v);

}  // namespace fusetune::exporter
