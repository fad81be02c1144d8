#pragma once
// The tuning database's schema: tuning_db/schema.sql, embedded, is the current version.
//
// If you change schema.sql in any way other than comments and whitespace, you MUST bump
// kSchemaVersion, add the migration from the previous version to migrations.cpp and add the
// new {version, hash} row to tests/db_schema_test.cpp, which fails until you do.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.hpp"

namespace fusetune::db {

inline constexpr int kSchemaVersion = 3;

// PRAGMA application_id ("FTDB"): marks a file as a fusetune database, so a foreign SQLite
// file that happens to have user_version 1 is still told apart.
inline constexpr int32_t kApplicationId = 0x46544442;

// The embedded tuning_db/schema.sql.
[[nodiscard]] std::string_view schema_sql();

// schema.sql without comments, runs of whitespace as one space: what the golden test hashes,
// so editing a comment needs no version bump.
[[nodiscard]] std::string normalize_schema_sql(std::string_view sql);

// Creates the current schema in an empty database and stamps user_version and
// application_id. Call inside a transaction.
void create_schema(const Connection& conn);

// The current schema's tables in creation order (parents first), each with its columns in
// declaration order and their declared types, read from an in-memory database built from
// schema.sql: verify() compares files against it, dump() orders its fields by it.
struct TableInfo {
  struct Column {
    std::string name;
    std::string type;  // declared: INTEGER, REAL, TEXT, BLOB
    bool operator==(const Column&) const = default;
  };
  std::string name;
  std::vector<Column> columns;
};
[[nodiscard]] const std::vector<TableInfo>& current_tables();

// The tables and columns of an open database, read the same way.
[[nodiscard]] std::vector<TableInfo> tables_of(const Connection& conn);

}  // namespace fusetune::db
