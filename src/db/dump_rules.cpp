#include "db/dump_rules.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::db {

namespace {

constexpr Reference kReferences[] = {
    {"env_id", "env", "environments", "fingerprint"},
    {"problem_id", "problem", "problems", "key"},
};

}  // namespace

std::span<const Reference> references() { return kReferences; }

const Reference* reference_for_column(std::string_view column) {
  for (const auto& r : kReferences)
    if (r.column == column) return &r;
  return nullptr;
}

const Reference* reference_for_field(std::string_view field) {
  for (const auto& r : kReferences)
    if (r.field == field) return &r;
  return nullptr;
}

const std::vector<TableRule>& table_rules() {
  static const std::vector<TableRule> kRules = {
      // The first time an environment was seen: the earliest created_at.
      {"environments", {"fingerprint"}, "excluded.created_at < environments.created_at"},
      {"problems", {"key"}, ""},
      {"results",
       {"env_id", "problem_id", "math", "variant_name", "params_json"},
       "excluded.created_at > results.created_at OR (excluded.created_at = results.created_at AND "
       "(excluded.status <> 'ok', COALESCE(excluded.time_median_ms, 1e308), excluded.status, excluded.reason) < "
       "(results.status <> 'ok', COALESCE(results.time_median_ms, 1e308), results.status, results.reason))"},
      // A measured winner always beats a shipped one; otherwise the newer one wins.
      {"winners",
       {"env_id", "problem_id", "math"},
       "excluded.shipped < winners.shipped OR "
       "(excluded.shipped = winners.shipped AND (excluded.created_at > winners.created_at OR "
       "(excluded.created_at = winners.created_at AND "
       "(COALESCE(excluded.time_median_ms, 1e308), excluded.variant_name) < "
       "(COALESCE(winners.time_median_ms, 1e308), winners.variant_name))))"},
  };
  return kRules;
}

const TableRule& rule_for(const std::string& table) {
  for (const auto& r : table_rules())
    if (r.table == table) return r;
  throw Error(ExitCode::failure, fmt::format("table '{}' has no dump rule (src/db/dump_rules.cpp: table_rules)", table));
}

}  // namespace fusetune::db
