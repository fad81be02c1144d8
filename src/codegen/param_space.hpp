#pragma once
// A kernel design's search space as data (STYLE.md 2, after CLBlast/CLTune): ordered parameters
// with their value lists, constraints that prune the cartesian product before anything is
// compiled (each with the reason a user sees), and the launch shape derived from a point.
// Every parameter reaches the source as `#define FT_<NAME> value` (macro_name()).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

struct Param {
  std::string name;    // lower case, e.g. "block"; the source gets FT_BLOCK
  std::string abbrev;  // tag in the variant name ("b" -> ".b256"); empty: left out of the name
                       // (a fixed or shape-derived value, the same for every point)
  std::vector<int64_t> values;
};

// One point of a space: parameter values in the space's order.
struct ParamValues {
  std::vector<std::pair<std::string, int64_t>> items;
  // The value of `name`; throws std::out_of_range naming it when absent.
  [[nodiscard]] int64_t at(std::string_view name) const;
};

struct Constraint {
  std::string reason;  // why a point is rejected, e.g. "vec must divide P*Q"
  std::function<bool(const ParamValues&)> ok;
};

struct Rejection {
  ParamValues values;
  std::string reason;  // the first failed constraint's
};

struct ParamSpace {
  std::vector<Param> params;
  std::vector<Constraint> constraints;
  std::function<LaunchConfig(const ParamValues&)> launch;

  // Adds a parameter; a fixed value is a one-element list with an empty abbrev.
  ParamSpace& param(std::string name, std::string abbrev, std::vector<int64_t> values);
  ParamSpace& require(std::string reason, std::function<bool(const ParamValues&)> ok);

  // Size of the cartesian product before pruning.
  [[nodiscard]] size_t size() const;
  // Every point that satisfies all constraints, in lexicographic order of the value lists
  // (first parameter slowest). Rejected points go to *rejected when given.
  [[nodiscard]] std::vector<ParamValues> enumerate(std::vector<Rejection>* rejected = nullptr) const;
  // prefix + ".<abbrev><value>" for each named parameter, e.g. "epilogue.nchw.b256.v4.e2".
  [[nodiscard]] std::string variant_name(const std::string& prefix, const ParamValues& values) const;
};

// "block" -> "FT_BLOCK".
[[nodiscard]] std::string macro_name(std::string_view param);

}  // namespace fusetune::codegen
