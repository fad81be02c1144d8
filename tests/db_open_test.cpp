// Opening a tuning database: created when missing, reopened as is, and every file that is
// not ours to write (random bytes, damaged, someone else's SQLite file, a newer fusetune's)
// refused with exit code 2 and one line naming the file, without a byte of it changed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "common/error.hpp"
#include "db/connection.hpp"
#include "db/database.hpp"
#include "db/embedded_db_files.hpp"
#include "db/schema.hpp"
#include "db_test_support.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::db {
namespace {

using testing::read_bytes;
using testing::write_bytes;
namespace fs = std::filesystem;

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// Without tuning_db/shipped's records, so counts are the test's own.
const OpenOptions kBare{.load_shipped = false};

Connection raw(const fs::path& p) {
  return Connection::open(p.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
}

// Opening must fail with InputError whose one-line message names the file and contains
// `fault`, and must leave the file's bytes exactly as they were.
void expect_refused(const fs::path& p, const std::string& fault) {
  const std::string before = read_bytes(p);
  try {
    (void)Database::open(p.string());
    ADD_FAILURE() << "opened " << p;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(what.find(p.string()), std::string::npos) << what;
    EXPECT_NE(what.find(fault), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
  }
  EXPECT_EQ(read_bytes(p), before) << "the file was modified";
  // Nothing left beside it either.
  EXPECT_FALSE(fs::exists(p.string() + "-wal")) << "a -wal file was left beside " << p;
  EXPECT_FALSE(fs::exists(p.string() + "-shm")) << "a -shm file was left beside " << p;
}

TEST(DbOpen, CreatesParentDirectoriesAndASchemaInWalMode) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "a" / "b" / "tuning.db";
  {
    auto db = Database::open(p.string());
    EXPECT_EQ(db.path(), p.string());
    EXPECT_TRUE(db.verify().ok);
  }
  ASSERT_TRUE(fs::exists(p));
  const Connection c = Connection::open(p.string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(c.query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(c.query_int64("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(c.query_text("PRAGMA journal_mode"), "wal");
}

TEST(DbOpen, ReopenKeepsWhatWasWritten) {
  TempDir dir("ft-db");
  const std::string p = (dir.path() / "tuning.db").string();
  {
    auto db = Database::open(p, kBare);
    db.write_results(testing::h200(), {testing::result("v1", 1.0), testing::result("v2", 2.0)});
    db.write_winner(testing::winner(testing::h200(), "v1", 1.0));
  }
  for (int i = 0; i < 2; ++i) {
    auto db = Database::open(p);
    EXPECT_EQ(db.results(std::nullopt, "", std::nullopt).size(), 2u);
    EXPECT_TRUE(db.winner("ca98e8d32aaaaf30", "tf32", testing::h200().fingerprint()).has_value());
    EXPECT_TRUE(db.verify().ok);
  }
}

TEST(DbOpen, MovedDatabaseKeepsWorking) {
  TempDir dir("ft-db");
  std::optional<Database> db;
  db.emplace(Database::open((dir.path() / "t.db").string(), kBare));
  Database other = std::move(*db);
  other.write_results(testing::h200(), {testing::result("v", 1.0)});
  EXPECT_EQ(other.results(std::nullopt, "", std::nullopt).size(), 1u);
}

// Issue 42: an empty file is nobody's database: fusetune never leaves one (a new database is
// built under a temporary name and linked into place, db/create_file.hpp), so one at the path is
// someone else's file, refused untouched.
TEST(DbOpen, AnEmptyFileIsRefusedUntouched) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "empty.db";
  write_bytes(p, "");
  expect_refused(p, "an empty file, not a database");
}

// A new database appears whole under its name, and nothing else is left in its folder.
TEST(DbOpen, ANewDatabaseIsCreatedWholeWithNothingBesideIt) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "sub" / "new.db";
  {
    auto db = Database::open(p.string(), kBare);
    EXPECT_TRUE(db.verify().ok);
  }
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(p.parent_path())) ++entries;
  EXPECT_EQ(entries, 1u) << "temporary files left beside the database";
  auto again = Database::open(p.string(), OpenOptions{.load_shipped = false, .read_only = true});
  EXPECT_TRUE(again.verify().ok);
}

// A "version 0" database: a valid SQLite file, no tables, user_version 0.
TEST(DbOpen, AnSqliteFileWithoutTablesIsMigratedFromVersionZero) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "v0.db";
  {
    const Connection c = raw(p);
    c.exec("CREATE TABLE scratch (a); DROP TABLE scratch;");
  }
  ASSERT_GT(fs::file_size(p), 0u);
  {
    auto db = Database::open(p.string(), kBare);
    EXPECT_TRUE(db.verify().ok) << db.verify().problems.front();
    db.write_results(testing::h200(), {testing::result("v", 1.0)});
  }
  const Connection c = Connection::open(p.string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(c.query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(c.query_int64("SELECT COUNT(*) FROM results"), 1);
}

// A version 1 database (before the figures of the typed verdicts and the pinned conv
// algorithms): opened, it migrates to the current version, keeps every record, and reads them
// with the new fields at their defaults.
TEST(DbOpen, AVersionOneDatabaseMigratesAndKeepsItsRecords) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "v1.db";
  {
    auto db = Database::open(p.string(), kBare);
    db.write_results(testing::h200(), {testing::result("v", 1.5)});
    db.write_winner(testing::winner(testing::h200(), "v", 1.5));
  }
  {
    // Back to version 1: the columns versions 2 and 3 added are dropped, as a version 1 file
    // lacks them.
    const Connection c = raw(p);
    c.exec("ALTER TABLE results DROP COLUMN gpu; ALTER TABLE results DROP COLUMN time_round; ALTER TABLE results DROP COLUMN worst_ratio; "
           "ALTER TABLE results DROP COLUMN rel_l2_limit; ALTER TABLE winners DROP COLUMN conv_choices; "
           "PRAGMA user_version = 1;");
  }
  auto db = Database::open(p.string(), kBare);
  const auto v = db.verify();
  EXPECT_TRUE(v.ok) << (v.problems.empty() ? "" : v.problems.front());
  const auto results = db.results(std::nullopt, "", std::nullopt);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(results[0].time_median_ms, 1.5);
  EXPECT_EQ(results[0].time_round, "");
  EXPECT_EQ(results[0].gpu, -1);
  const auto winners = db.winners(std::nullopt, "", std::nullopt);
  ASSERT_EQ(winners.size(), 1u);
  EXPECT_EQ(winners[0].conv_choices, "");
  const Connection c = Connection::open(p.string(), SQLITE_OPEN_READONLY);
  EXPECT_EQ(c.query_int64("PRAGMA user_version"), kSchemaVersion);
}

// Someone's SQLite file with only a view in it: not ours, whatever its (absent) tables say; its
// journal mode is not switched to WAL and nothing is created beside it.
TEST(DbOpen, AForeignFileWithOnlyAViewIsRefusedAndItsJournalModeKept) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "views.db";
  {
    const Connection c = raw(p);
    c.exec("CREATE VIEW v AS SELECT 1 AS one;");
  }
  expect_refused(p, "not a fusetune tuning database");
  const Connection c = Connection::open_immutable(p.string());
  EXPECT_EQ(c.query_text("PRAGMA journal_mode"), "delete");
}

// A fusetune database with one data page overwritten: the schema page is intact, so only
// reading every page finds it. Refused before anything writes, `db import` included.
TEST(DbOpen, OursWithADamagedDataPageIsRefusedBeforeAnyWrite) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "page.db";
  {
    auto db = Database::open(p.string());  // the shipped records: many pages
    const Connection c = raw(p);
    c.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  fs::remove(p.string() + "-wal");
  fs::remove(p.string() + "-shm");
  std::string bytes = read_bytes(p);
  const size_t page = 4096;
  ASSERT_GT(bytes.size(), 20 * page);
  for (size_t i = 10 * page; i < 11 * page; ++i) bytes[i] = char(0xA5 ^ (i & 0xff));  // a data page
  write_bytes(p, bytes);
  expect_refused(p, "damaged");
}

TEST(DbOpen, RandomBytesAreRefusedUntouched) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "random.db";
  write_bytes(p, random_bytes(8192, 1));
  expect_refused(p, "not an SQLite database");
  write_bytes(p, "hello");  // shorter than any SQLite file
  expect_refused(p, "not an SQLite database");
}

TEST(DbOpen, ADamagedSqliteFileIsRefusedUntouched) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "damaged.db";
  // The SQLite header, then garbage where the schema page should be.
  write_bytes(p, std::string("SQLite format 3\0", 16) + random_bytes(8192 - 16, 2));
  expect_refused(p, "damaged");

  // A real database whose schema page is overwritten after its 100-byte file header.
  const fs::path q = dir.path() / "overwritten.db";
  { (void)Database::open(q.string()); }
  std::string bytes = read_bytes(q);
  ASSERT_GE(bytes.size(), 4096u);
  const std::string garbage = random_bytes(4096 - 100, 3);
  bytes.replace(100, garbage.size(), garbage);
  write_bytes(q, bytes);
  fs::remove(q.string() + "-wal");
  fs::remove(q.string() + "-shm");
  expect_refused(q, "damaged");
}

TEST(DbOpen, SomeoneElsesSqliteFileIsRefusedUntouched) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "foreign.db";
  {
    const Connection c = raw(p);
    c.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('ada');");
  }
  expect_refused(p, "not a fusetune tuning database (an SQLite file with tables customers, user_version 0");
  EXPECT_FALSE(fs::exists(p.string() + "-wal")) << "the journal mode was changed";

  // user_version 1 but not marked as ours.
  { raw(p).exec("PRAGMA user_version = 1"); }
  expect_refused(p, "not a fusetune tuning database");
}

TEST(DbOpen, ANewerSchemaIsRefusedUntouched) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "newer.db";
  { (void)Database::open(p.string()); }
  {
    const Connection c = raw(p);
    c.exec("PRAGMA user_version = 99");
  }
  expect_refused(p, "schema version 99 is newer than this fusetune reads (3)");
}

TEST(DbOpen, OursWithATableMissingIsRefused) {
  TempDir dir("ft-db");
  const fs::path p = dir.path() / "partial.db";
  { (void)Database::open(p.string()); }
  { raw(p).exec("DROP TABLE winners"); }
  expect_refused(p, "damaged: missing table(s) winners");
}

TEST(DbOpen, ADirectoryIsRefused) {
  TempDir dir("ft-db");
  EXPECT_THROW((void)Database::open(dir.path().string()), InputError);
}

TEST(DbOpen, ShippedRecordsSeedANewDatabaseOnly) {
  size_t shipped_lines = 0;
  for (const auto& [name, text] : embedded_db_files())
    if (name.ends_with(".jsonl"))
      for (size_t pos = text.find("\"table\":\"winners\""); pos != std::string::npos;
           pos = text.find("\"table\":\"winners\"", pos + 1))
        ++shipped_lines;
  TempDir dir("ft-db");
  auto db = Database::open((dir.path() / "seeded.db").string());
  const auto winners = db.winners(std::nullopt, "", std::nullopt);
  EXPECT_EQ(winners.size(), shipped_lines);
  for (const auto& w : winners) EXPECT_TRUE(w.shipped) << w.variant_name;
  auto bare = Database::open((dir.path() / "bare.db").string(), OpenOptions{.load_shipped = false});
  EXPECT_TRUE(bare.winners(std::nullopt, "", std::nullopt).empty());
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DbOpen, DefaultPathFollowsFusetuneDbThenXdgThenHome) {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv db("FUSETUNE_DB", "/data/t.db");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_db_path(), "/data/t.db");
  }
  {
    ScopedEnv db("FUSETUNE_DB", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_db_path(), "/xdg/fusetune/tuning.db");
  }
  {
    ScopedEnv db("FUSETUNE_DB", "");
    ScopedEnv xdg("XDG_CACHE_HOME", "relative/ignored");
    EXPECT_EQ(default_db_path(), "/home/someone/.cache/fusetune/tuning.db");
  }
}

}  // namespace
}  // namespace fusetune::db
