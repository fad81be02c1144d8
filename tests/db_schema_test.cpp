// The schema is pinned: tuning_db/schema.sql may not change (beyond comments and
// whitespace) without a new schema version and a migration, or databases already out there
// would be read with the wrong idea of their tables.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include <fmt/format.h>

#include "common/fnv1a.hpp"
#include "db/embedded_db_files.hpp"
#include "db/migrations.hpp"
#include "db/schema.hpp"
#include "db_test_support.hpp"

namespace fusetune::db {
namespace {

// One row per schema version ever released: {version, FNV-1a 64 of normalize_schema_sql()}.
// Never edit a row; append one when kSchemaVersion goes up.
struct GoldenSchema {
  int version;
  uint64_t hash;
};
constexpr GoldenSchema kGolden[] = {
    {1, 0x70642a43927ed75cULL},
    {2, 0xbacf2e5eca0d739aULL},
    {3, 0x691cdeeaae471eebULL},
};

TEST(DbSchema, SchemaChangesComeWithAVersionBump) {
  const uint64_t hash = fnv1a64(normalize_schema_sql(schema_sql()));
  const GoldenSchema& last = kGolden[std::size(kGolden) - 1];
  ASSERT_EQ(last.version, kSchemaVersion)
      << "kSchemaVersion is " << kSchemaVersion << " but the newest golden row is version " << last.version
      << ": add the row {" << kSchemaVersion << ", " << fmt::format("0x{:016x}ULL", hash)
      << "} to kGolden in tests/db_schema_test.cpp";
  EXPECT_EQ(last.hash, hash) << "tuning_db/schema.sql changed (hash " << fmt::format("0x{:016x}", hash)
                             << ") but kSchemaVersion is still " << kSchemaVersion
                             << ": bump kSchemaVersion in src/db/schema.hpp, add the migration from version "
                             << kSchemaVersion << " to src/db/migrations.cpp, and append {" << kSchemaVersion + 1
                             << ", " << fmt::format("0x{:016x}ULL", hash) << "} to kGolden here.";
}

TEST(DbSchema, GoldenVersionsAreContiguous) {
  for (size_t i = 0; i < std::size(kGolden); ++i) EXPECT_EQ(kGolden[i].version, int(i) + 1);
}

TEST(DbSchema, MigrationsLeadFromVersionOneToTheCurrentOne) {
  int expected = 2;
  for (const auto& m : migrations()) EXPECT_EQ(m.to_version, expected++) << "migrations must be contiguous";
  EXPECT_EQ(expected - 1, kSchemaVersion < 2 ? 1 : kSchemaVersion)
      << "every version from 2 to kSchemaVersion needs a migration in src/db/migrations.cpp";
}

TEST(DbSchema, EmbeddedSchemaIsTheSourceFile) {
  // A stale build would pin (and create) an old schema.
  EXPECT_EQ(std::string(schema_sql()),
            testing::read_bytes(std::string(FUSETUNE_SOURCE_DIR) + "/tuning_db/schema.sql"));
}

TEST(DbSchema, NormalizingIgnoresCommentsAndWhitespaceButNotLiterals) {
  EXPECT_EQ(normalize_schema_sql("-- a comment\nCREATE  TABLE t (\n  a TEXT -- why\n);\n"), "CREATE TABLE t ( a TEXT );");
  EXPECT_EQ(normalize_schema_sql("DEFAULT '  two  -- spaces '"), "DEFAULT '  two  -- spaces '");
  EXPECT_NE(normalize_schema_sql("CREATE TABLE t (a TEXT)"), normalize_schema_sql("CREATE TABLE t (a INTEGER)"));
}

TEST(DbSchema, FnvMatchesKnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(DbSchema, TablesComeParentsFirstWithTheirColumns) {
  std::vector<std::string> names;
  for (const auto& t : current_tables()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"environments", "problems", "results", "winners"}));
  std::set<std::string> result_columns;
  for (const auto& c : current_tables()[2].columns) result_columns.insert(c.name);
  for (const char* c : {"env_id", "problem_id", "math", "candidate", "variant_name", "params_json", "status", "reason",
                        "log_excerpt", "registers", "spills", "time_min_ms", "time_median_ms", "time_max_ms",
                        "time_count", "kernel_median_ms", "gbps", "pct_copy", "max_abs", "max_rel", "rel_l2",
                        "created_at"})
    EXPECT_TRUE(result_columns.count(c)) << c;
}

}  // namespace
}  // namespace fusetune::db
