#pragma once
// `query`'s tables, in tune's conventions (tune_table.hpp): values every row shares printed once
// above the table, layouts by name, the winner marked, floors and baselines labelled, long
// names cut so that every line fits `width` columns.
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "db/records.hpp"

namespace fusetune::cli {

[[nodiscard]] std::string winners_table(const std::vector<db::WinnerRecord>& winners, size_t width = 120);

// Every result, grouped by problem, math mode and environment in the order given; a result that
// is a stored winner of its group is marked. `gpu_names`: each environment fingerprint's GPU
// (db::Database::environment), for the groups' headers.
[[nodiscard]] std::string results_table(const std::vector<db::ResultRecord>& results,
                                        const std::vector<db::WinnerRecord>& winners,
                                        const std::map<std::string, std::string>& gpu_names, size_t width = 120);

// A result's parameters (stored as JSON text, a flat object when fusetune wrote it). The text may
// come from an imported dump: parsed with a depth limit; InputError naming the record otherwise.
[[nodiscard]] nlohmann::json record_params(const db::ResultRecord& r);

}  // namespace fusetune::cli
