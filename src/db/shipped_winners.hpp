#pragma once
// Which winners fusetune itself ships (tuning_db/shipped, embedded): only these may carry the
// mark "shipped with fusetune" after an import or a merge (issue 42: any dump could set it).
#include <nlohmann/json.hpp>

namespace fusetune::db {

// Whether `winner`, a winners line of a dump (environment fingerprint, problem key, math,
// candidate, variant name, variant JSON and median time), is one of the shipped records.
[[nodiscard]] bool is_shipped_winner(const nlohmann::ordered_json& winner);

}  // namespace fusetune::db
