#pragma once
// The main operator of a spec: `conv2d(...)`, `conv3d(...)`, `conv_transpose2d(...)`,
// `conv_transpose3d(...)`, `linear(...)` or `matmul(...)`, its keys, defaults and checks.
// Internal to the parser.
#include <string_view>
#include <vector>

#include "spec/problem.hpp"
#include "spec/token_cursor.hpp"

namespace fusetune::spec::detail {

// One key of a main operator, in canonical order.
struct MainKey {
  std::string_view name;
  bool required;
};

// Parses the main operator at the cursor into problem.main, problem.conv or problem.gemm,
// with every default filled in, and checks the sizes (check_conv / check_gemm).
void parse_main(TokenCursor& cur, Problem& problem);

std::string_view main_name(MainKind kind);
// The keys of `kind` in canonical order (canonical.cpp prints them in this order).
const std::vector<MainKey>& main_keys(MainKind kind);

}  // namespace fusetune::spec::detail
