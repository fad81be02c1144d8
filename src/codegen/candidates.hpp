#pragma once
// The candidate registry: what every other part of fusetune needs to know about a candidate, in
// one row per candidate (candidates.cpp). Names, roles, the report's colours, the generator
// generate_variants() calls and the rules for run-time expansion and export are read from here;
// nothing else lists candidates or matches their names. A new candidate is its own generator
// files, a value of `Candidate` (variant.hpp) and one row; tests/candidate_registry_test.cpp
// fails when a value has no row, a row repeats a name or colour, or a row lacks a generator.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/shape.hpp"
#include "codegen/variant.hpp"

namespace fusetune::codegen {

// What a generator gets: the problem, its derived shape, the GPU's limits and the options.
struct GenerateInput {
  const spec::Problem& problem;
  const Shape& shape;
  const gpu::DeviceLimits& limits;
  const GenerateOptions& options;
};
using Generator = std::vector<Variant> (*)(const GenerateInput&);

struct CandidateInfo {
  Candidate id;
  std::string_view name;    // the CLI's and the database's word for it
  Role role;
  std::string_view colour;  // its bars and legend swatch in the report
  Generator generate;       // its variants for a problem, in generate_variants()'s order
  // Its generated variants are templates that the tuner expands into one variant per engine
  // configuration the GPU's cuDNN offers (an unexpanded template is never run or stored).
  bool engines_at_run_time = false;
  // PyTorch can run its plan (export --format torch, kernelbench): false for cuDNN's fused graph.
  bool runs_in_torch = true;
  // Its kernels compute the convolution themselves: no cuDNN conv runs (export headers say so).
  bool own_conv = false;
  // Version-2 problems only (a linear or matmul): generate_model_variants calls its generator, and
  // it makes nothing for a conv2d chain.
  bool model_only = false;
};

// Every candidate, in the order generate_variants() produces them.
[[nodiscard]] std::span<const CandidateInfo> candidate_table();
// The row of `c` (every value has one: the registry test checks it).
[[nodiscard]] const CandidateInfo& candidate_info(Candidate c);
// The row named `name` ("fused-conv"), or nullptr for a name this fusetune does not know (a
// database row from another version).
[[nodiscard]] const CandidateInfo* candidate_info(std::string_view name);

// Whether v's candidate is one whose generated templates become one variant per cuDNN engine
// configuration at run time (its row's engines_at_run_time).
[[nodiscard]] bool engines_at_run_time(const Variant& v);
// Whether PyTorch can run the plan of a stored result's candidate (its row's runs_in_torch);
// false for a name this fusetune does not know.
[[nodiscard]] bool runs_in_torch(std::string_view candidate_name);
// The role of a stored result's candidate; nullopt for a name this fusetune does not know.
[[nodiscard]] std::optional<Role> role_of(std::string_view candidate_name);

}  // namespace fusetune::codegen
