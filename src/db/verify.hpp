#pragma once
// `fusetune db verify`: is this database whole and what this fusetune expects?
#include <string>
#include <vector>

#include "db/connection.hpp"

namespace fusetune::db {

struct VerifyReport {
  bool ok = true;
  std::vector<std::string> problems;  // one line each; empty when ok
};

// SQLite's integrity_check and foreign_key_check, the schema version and mark, every table
// and column of schema.sql (declared types included), and each environment's fingerprint
// against its fields. Never throws for what it finds: an SQLite error is a problem too.
[[nodiscard]] VerifyReport verify_database(const Connection& conn);

}  // namespace fusetune::db
