#pragma once
// What `db dump` and `db import` know about the schema's tables (db/dump.cpp): which columns hold
// a parent's row id (they travel as the parent's natural key), and each table's natural key and
// the rule for which of two rows with that key is kept.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fusetune::db {

// A column holding a parent's row id travels as the parent's natural key.
struct Reference {
  std::string_view column;      // env_id
  std::string_view field;       // "env" in the dump
  std::string_view parent;      // environments
  std::string_view parent_key;  // fingerprint
};

// Every column that references another table.
[[nodiscard]] std::span<const Reference> references();
[[nodiscard]] const Reference* reference_for_column(std::string_view column);
[[nodiscard]] const Reference* reference_for_field(std::string_view field);

// Per table: its natural key (the conflict target, and the dump's sort order) and when a
// dumped row replaces one already there. Every table in schema.sql needs a rule: a new table
// without one makes dump() fail loudly (tests/db_dump_test.cpp) rather than skip it.
// The rules are a total order on a key's rows, never "the first one imported": merging the
// databases of a sweep's shards (`db merge`) gives the same file in any order. When the times
// are equal to the millisecond, a fixed key decides: for results, a verified record before a
// failed one, then the faster, then status and reason as text; for winners, the faster, then
// the name.
struct TableRule {
  std::string_view table;
  std::vector<std::string_view> key;
  std::string_view replace_when;  // empty: an existing row is kept
};

[[nodiscard]] const std::vector<TableRule>& table_rules();
// The rule of `table`; throws for a table without one.
[[nodiscard]] const TableRule& rule_for(const std::string& table);

}  // namespace fusetune::db
