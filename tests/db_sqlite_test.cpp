// The SQLite wrappers: one checking macro with a useful message, RAII handles, and a
// transaction that rolls back unless committed.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <type_traits>

#include "db/connection.hpp"
#include "db/sqlite_check.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::db {
namespace {

Connection memory() { return Connection::open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE); }

static_assert(!std::is_copy_constructible_v<Connection> && std::is_move_constructible_v<Connection>);
static_assert(!std::is_copy_constructible_v<Statement> && std::is_move_constructible_v<Statement>);
static_assert(!std::is_copy_constructible_v<Transaction> && !std::is_move_constructible_v<Transaction>);

TEST(DbSqlite, CallMacroNamesTheCallTheCodeAndTheMessage) {
  const Connection c = memory();
  try {
    FT_SQLITE_CALL(c.get(), sqlite3_exec(c.get(), "SELECT * FROM nowhere", nullptr, nullptr, nullptr));
    FAIL() << "no throw";
  } catch (const SqliteError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("db_sqlite_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("sqlite3_exec(c.get(), \"SELECT * FROM nowhere\""), std::string::npos) << what;
    EXPECT_NE(what.find("SQL logic error"), std::string::npos) << what;  // sqlite3_errstr
    EXPECT_NE(what.find("no such table: nowhere"), std::string::npos) << what;  // sqlite3_errmsg
    EXPECT_EQ(e.code(), ExitCode::failure);
  }
}

TEST(DbSqlite, CorruptionIsBadInput) {
  EXPECT_EQ(SqliteError(SQLITE_CORRUPT, "x").code(), ExitCode::bad_input);
  EXPECT_EQ(SqliteError(SQLITE_NOTADB, "x").code(), ExitCode::bad_input);
  EXPECT_EQ(SqliteError(SQLITE_BUSY, "x").code(), ExitCode::failure);
}

TEST(DbSqlite, NoexceptTwinReportsAndReturns) {
  const Connection c = memory();
  ::testing::internal::CaptureStderr();
  FT_SQLITE_CALL_NOEXCEPT(c.get(), sqlite3_exec(c.get(), "ROLLBACK", nullptr, nullptr, nullptr));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning"), std::string::npos);
  EXPECT_NE(err.find("ROLLBACK"), std::string::npos);
}

TEST(DbSqlite, StatementBindsAndReadsEveryKind) {
  const Connection c = memory();
  c.exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n REAL)");
  const std::string blob("\0\x01\xff", 3);
  {
    Statement ins(c, "INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
    ins.bind(1, int64_t{1} << 40);
    ins.bind(2, 2.5);
    ins.bind(3, std::string("text with \0 inside", 17));
    ins.bind_blob(4, blob);
    ins.bind(5, std::nan(""));  // SQLite stores NaN as NULL
    EXPECT_FALSE(ins.step());
    ins.reset();
    ins.clear_bindings();
    ins.bind(1, 7);
    ins.bind_blob(4, "");
    ins.bind_null(5);
    EXPECT_FALSE(ins.step());
  }
  Statement sel(c, "SELECT i, r, s, b, n FROM t ORDER BY rowid");
  ASSERT_TRUE(sel.step());
  EXPECT_EQ(sel.column_count(), 5);
  EXPECT_STREQ(sel.column_name(3), "b");
  EXPECT_EQ(sel.column_int64(0), int64_t{1} << 40);
  EXPECT_EQ(sel.column_double(1), 2.5);
  EXPECT_EQ(sel.column_text(2), std::string("text with \0 inside", 17));
  EXPECT_EQ(sel.column_type(3), SQLITE_BLOB);
  EXPECT_EQ(sel.column_blob(3), blob);
  EXPECT_TRUE(sel.column_is_null(4));
  EXPECT_TRUE(std::isnan(sel.column_real(4)));
  ASSERT_TRUE(sel.step());
  EXPECT_EQ(sel.column_int(0), 7);
  EXPECT_EQ(sel.column_type(3), SQLITE_BLOB) << "an empty blob stays a blob, not NULL";
  EXPECT_EQ(sel.column_blob(3), "");
  EXPECT_TRUE(sel.column_is_null(2));
  EXPECT_FALSE(sel.step());
}

TEST(DbSqlite, StatementErrorsCarryTheirSql) {
  const Connection c = memory();
  c.exec("CREATE TABLE t (a TEXT NOT NULL)");
  try {
    Statement s(c, "INSERT INTO t VALUES (NULL)");
    s.step();
    FAIL() << "no throw";
  } catch (const SqliteError& e) {
    EXPECT_NE(std::string(e.what()).find("INSERT INTO t VALUES (NULL)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NOT NULL constraint failed: t.a"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Statement(c, "SELEC nonsense"), SqliteError);
}

TEST(DbSqlite, TransactionRollsBackUnlessCommitted) {
  const Connection c = memory();
  c.exec("CREATE TABLE t (a INTEGER)");
  {
    Transaction txn(c);
    c.exec("INSERT INTO t VALUES (1)");
  }
  EXPECT_EQ(c.query_int64("SELECT COUNT(*) FROM t"), 0);
  {
    Transaction txn(c);
    c.exec("INSERT INTO t VALUES (2)");
    txn.commit();
  }
  EXPECT_EQ(c.query_int64("SELECT COUNT(*) FROM t"), 1);
  try {
    Transaction txn(c);
    c.exec("INSERT INTO t VALUES (3)");
    throw std::runtime_error("midway");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(c.query_int64("SELECT COUNT(*) FROM t"), 1);
  EXPECT_NE(sqlite3_get_autocommit(c.get()), 0) << "no transaction left open";
}

TEST(DbSqlite, MovedConnectionKeepsWorking) {
  Connection a = memory();
  a.exec("CREATE TABLE t (a INTEGER)");
  Connection b = std::move(a);
  EXPECT_EQ(b.query_int64("SELECT COUNT(*) FROM t"), 0);
  EXPECT_EQ(b.query_text("SELECT 'x' || 'y'"), "xy");
}

TEST(DbSqlite, OpeningAMissingFileReadOnlyFails) {
  EXPECT_THROW(Connection::open("/nonexistent-dir/x.db", SQLITE_OPEN_READONLY), SqliteError);
}

// A fault of the user's file reads as one: what could not be done, to which file, and why, in
// SQLite's and the system's words; no source location, no SQL. Exit code 2: the user's to fix.
TEST(DbSqlite, FaultsOfTheFileNameTheFileNotTheCall) {
  const TempDir dir("ft-sqlite");
  const std::string path = (dir.path() / "t.db").string();
  { Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE).exec("CREATE TABLE t (a INTEGER)"); }
  const Connection ro = Connection::open(path, SQLITE_OPEN_READONLY);
  try {
    ro.exec("INSERT INTO t VALUES (1)");
    FAIL() << "no throw";
  } catch (const SqliteError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write the tuning database " + path + ": attempt to write a readonly database");
    EXPECT_EQ(e.reason(), "attempt to write a readonly database");
    EXPECT_EQ(e.primary(), SQLITE_READONLY);
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  try {
    (void)Connection::open("/nonexistent-dir/x.db", SQLITE_OPEN_READONLY);
    FAIL() << "no throw";
  } catch (const SqliteError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot open the tuning database /nonexistent-dir/x.db: unable to open database file", 0), 0u)
        << what;
    EXPECT_EQ(what.find(".cpp:"), std::string::npos) << what;
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  // fusetune's own mistakes on the same file keep the call and its location: they are bugs.
  try {
    ro.exec("SELECT * FROM nowhere");
    FAIL() << "no throw";
  } catch (const SqliteError& e) {
    EXPECT_NE(std::string(e.what()).find("connection.cpp:"), std::string::npos) << e.what();
    EXPECT_EQ(e.code(), ExitCode::failure);
  }
}

TEST(DbSqlite, FileFaultsAreBadInputOthersFailures) {
  for (const int rc : {SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY_DBMOVED})
    EXPECT_EQ(SqliteError(rc, "x").code(), ExitCode::bad_input) << rc;
  for (const int rc : {SQLITE_FULL, SQLITE_IOERR_WRITE, SQLITE_CONSTRAINT, SQLITE_ERROR})
    EXPECT_EQ(SqliteError(rc, "x").code(), ExitCode::failure) << rc;
}

}  // namespace
}  // namespace fusetune::db
