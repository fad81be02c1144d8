#pragma once
// Schema migrations, oldest first. A new (empty, version 0) database gets the current
// schema.sql directly; a database at version V in [1, kSchemaVersion) runs the migrations
// to V+1, ..., kSchemaVersion in order, inside the caller's transaction, so a failure
// leaves it at V.
#include <string_view>
#include <vector>

#include "db/connection.hpp"

namespace fusetune::db {

struct Migration {
  int to_version;        // applies to a database at to_version - 1
  std::string_view sql;  // may hold several statements
};

// Contiguous: to_version runs 2, 3, ..., kSchemaVersion (tests/db_schema_test.cpp checks).
[[nodiscard]] const std::vector<Migration>& migrations();

// From from_version (>= 1) to kSchemaVersion; stamps user_version after each step.
void migrate(const Connection& conn, int from_version);

}  // namespace fusetune::db
