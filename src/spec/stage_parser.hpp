#pragma once
// The general-form stages of a spec that are not elementwise ops: reductions over any dims,
// logsumexp, softmax, pooling, norms (and dropout, refused). Internal to the parser.
#include <optional>
#include <string_view>
#include <vector>

#include "spec/problem.hpp"
#include "spec/shape_rules.hpp"
#include "spec/token_cursor.hpp"

namespace fusetune::spec::detail {

struct StageContext {
  Problem& problem;        // norms with affine parameters append their shapes to param_shapes
  const Shape& shape;      // of the value the stage reads
  bool reduced_channels;   // a reduction over dim 1 happened before
};

// Parses the stage named `name` (already taken) with its arguments, or nullopt when `name`
// is not one of these stages. adaptive_avg_pool*d(1) comes back as the reduce_mean it is.
std::optional<Stage> parse_general_stage(TokenCursor& cur, const Token& name, const StageContext& ctx);

bool is_general_stage_name(std::string_view name);
const std::vector<std::string_view>& general_stage_names();  // for "did you mean"

// "reduce_sum", "max_pool2d", "group_norm", ... (canonical.cpp)
std::string_view pool_name(const Stage& stage);
std::string_view norm_name(NormKind kind);

}  // namespace fusetune::spec::detail
