#pragma once
// A list of problems for a sweep (`tune --spec-file FILE`, docs/cluster.md: "Sweeps"): one spec per
// line, or a preset name alone on its line; `#` starts a comment (no spec contains one), blank
// lines are skipped. The whole list is parsed before anything runs, so a bad line is refused
// before any GPU work: "FILE:LINE: spec error at column C: ..." (the column counts from the
// start of the line as written), exit 2.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::spec {

struct ListedProblem {
  size_t line = 0;        // 1-based line of the file
  Problem problem;
  size_t duplicate_of = 0;  // > 0: the same problem (canonical form) as this earlier line
};

// Every problem of `text` in file order, duplicates included (marked). `file` names the list
// in messages. Throws InputError for a bad line, or for a list with no problem at all.
[[nodiscard]] std::vector<ListedProblem> parse_spec_list(std::string_view text, std::string_view file);

}  // namespace fusetune::spec
