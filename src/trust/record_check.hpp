#pragma once
// Records from a database or a dump are untrusted input: each field is checked against what
// fusetune itself writes (names, bounded sizes and texts, finite figures, a variant whose plan
// is sound for its problem) before the record is imported, merged, exported or run.
#include <string>

#include "db/records.hpp"

namespace fusetune::trust {

// "" when the record could have been written by fusetune; else one line naming the field.
[[nodiscard]] std::string check_environment(const db::Environment& env);
[[nodiscard]] std::string check_result(const db::ResultRecord& r);
// Fields, and the variant: it parses, is the record's, and its plan is sound for the record's
// problem (codegen::check_variant).
[[nodiscard]] std::string check_winner(const db::WinnerRecord& w);

}  // namespace fusetune::trust
