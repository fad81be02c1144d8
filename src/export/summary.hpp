#pragma once
// The text both the .cu and the PyTorch module open with: what was tuned, where, and what it
// won by. Plain lines without comment markers; each format adds its own.
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "db/records.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

[[nodiscard]] std::vector<std::string> summary_lines(const spec::Problem& problem, const db::WinnerRecord& winner,
                                                     const codegen::Variant& variant);

// Every line prefixed with `prefix` ("// ", "# "), trailing blanks trimmed, joined with '\n'
// (a newline after the last one too).
[[nodiscard]] std::string comment_block(const std::vector<std::string>& lines, const std::string& prefix);

}  // namespace fusetune::exporter
