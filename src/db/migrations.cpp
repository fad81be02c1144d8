#include "db/migrations.hpp"

#include <fmt/format.h>

#include "db/schema.hpp"

namespace fusetune::db {

const std::vector<Migration>& migrations() {
  // Version 1 was the first schema. When schema.sql changes, append
  // {N, "ALTER TABLE ...; ..."} taking a version N-1 database to what schema.sql N creates:
  // the same tables, columns (name and declared type; their order may differ, since
  // ALTER TABLE ADD COLUMN appends and dump() selects by name) and indexes; verify() then
  // passes on a migrated file. Migrations run inside a transaction with foreign keys on, so
  // a table rebuild must keep every row's references valid. Shipped records
  // (tuning_db/shipped) are dumps of the version they were made with: regenerate them, or
  // keep old field names importable, when a column is renamed or dropped.
  static const std::vector<Migration> kMigrations = {
      {2,
       "ALTER TABLE results ADD COLUMN time_round TEXT NOT NULL DEFAULT '';"
       "ALTER TABLE results ADD COLUMN worst_ratio REAL;"
       "ALTER TABLE results ADD COLUMN rel_l2_limit REAL;"
       "ALTER TABLE winners ADD COLUMN conv_choices TEXT NOT NULL DEFAULT '';"},
      {3, "ALTER TABLE results ADD COLUMN gpu INTEGER NOT NULL DEFAULT -1;"},
  };
  return kMigrations;
}

void migrate(const Connection& conn, int from_version) {
  for (const auto& m : migrations()) {
    if (m.to_version <= from_version) continue;
    conn.exec(m.sql);
    conn.exec(fmt::format("PRAGMA user_version = {}", m.to_version));
  }
}

}  // namespace fusetune::db
