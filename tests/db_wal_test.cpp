// Issue 42: a database left by a kill in the middle of a WAL checkpoint. Its main file is then
// short (the checkpoint wrote page 1, which names the new size, but not yet the pages after it)
// while the -wal still holds every committed page. SQLite reads such a file whole through its
// WAL; fusetune's file check used to read it immutable (ignoring the -wal) and called it
// "damaged", and the README forbids touching a damaged file, so every record was out of reach.
// GPU-free.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/error.hpp"
#include "common/temp_dir.hpp"
#include "db/connection.hpp"
#include "db/database.hpp"
#include "db_test_support.hpp"

namespace fusetune::db {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::write_bytes;

constexpr size_t kRecords = 400;

size_t results_in(const std::string& path, bool read_only) {
  return Database::open(path, OpenOptions{.load_shipped = false, .read_only = read_only})
      .results(std::nullopt, "", std::nullopt)
      .size();
}

// Builds `dir`/killed.db as a kill mid-checkpoint leaves it (see the top of the file).
fs::path killed_mid_checkpoint(const fs::path& dir) {
  const fs::path live = dir / "live.db", snap = dir / "snap.db", done = dir / "done.db", out = dir / "killed.db";
  auto db = Database::open(live.string(), OpenOptions{.load_shipped = false});
  // Enough rows for many pages, few enough that SQLite's automatic checkpoint (1000 pages) stays away.
  std::vector<ResultRecord> rows;
  for (size_t i = 0; i < kRecords; ++i) rows.push_back(testing::result("v" + std::to_string(i), 1.0 + double(i)));
  db.write_results(testing::h200(), rows);
  // The files as a SIGKILL now would leave them: everything committed is in the -wal.
  EXPECT_TRUE(fs::exists(live.string() + "-wal"));
  write_bytes(snap, read_bytes(live));
  write_bytes(snap.string() + "-wal", read_bytes(live.string() + "-wal"));
  // The finished checkpoint of that state, for the main file's new bytes.
  write_bytes(done, read_bytes(snap));
  write_bytes(done.string() + "-wal", read_bytes(snap.string() + "-wal"));
  {
    auto c = Connection::open(done.string(), SQLITE_OPEN_READWRITE);
    c.exec("PRAGMA wal_checkpoint(FULL)");
  }
  const std::string full = read_bytes(done);
  EXPECT_GT(full.size(), size_t(3 * 4096));
  // Killed after the checkpoint wrote its first two pages (it writes in page order): page 1
  // names the new size, the pages past the old end are not there yet.
  std::string killed = read_bytes(snap);
  EXPECT_LT(killed.size(), full.size()) << "the database did not grow in the -wal";
  if (killed.size() < 2 * 4096) killed.resize(2 * 4096);
  killed.replace(0, 2 * 4096, full.substr(0, 2 * 4096));
  write_bytes(out, killed);
  write_bytes(out.string() + "-wal", read_bytes(snap.string() + "-wal"));
  return out;
}

TEST(DbWal, ADatabaseKilledMidCheckpointOpensWithEveryRecord) {
  TempDir dir("ft-wal");
  const fs::path killed = killed_mid_checkpoint(dir.path());
  // What the old check saw: the main file alone is not a sound database.
  bool immutable_ok = true;
  try {
    auto c = Connection::open_immutable(killed.string());
    c.exec("PRAGMA quick_check");
    immutable_ok = c.query_text("PRAGMA quick_check") == "ok";
  } catch (const Error&) {
    immutable_ok = false;
  }
  EXPECT_FALSE(immutable_ok) << "the test no longer builds a short main file";

  // Reading commands read it through the -wal: every record is there.
  EXPECT_EQ(results_in(killed.string(), true), kRecords);
  // A writing command opens it too (SQLite finishes the checkpoint), and nothing is lost.
  auto db = Database::open(killed.string(), OpenOptions{.load_shipped = false});
  EXPECT_TRUE(db.verify().ok);
  EXPECT_EQ(db.results(std::nullopt, "", std::nullopt).size(), kRecords);
}

// The same file in a folder nobody may write (a read-only mount): SQLite cannot make the -shm
// it needs to read the -wal there, so fusetune reads a private copy of both.
TEST(DbWal, ADatabaseKilledMidCheckpointInAReadOnlyFolderIsReadWhole) {
  if (std::system("unshare -m sh -c 'mount --bind /tmp /mnt && mount -o remount,ro,bind /mnt' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cannot make a read-only bind mount here (needs root and unshare -m)";
  TempDir dir("ft-wal");
  const fs::path killed = killed_mid_checkpoint(dir.path());
  const std::string d = dir.path().string();
  std::string out;
  FILE* p = popen(("unshare -m sh -c 'mount --bind " + d + " " + d + " && mount -o remount,ro,bind " + d + " && " +
                   FUSETUNE_BINARY + " db dump --db " + killed.string() + "; echo exit=$?' 2>&1")
                      .c_str(),
                  "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  size_t results = 0;
  for (size_t at = out.find("{\"table\":\"results\""); at != std::string::npos;
       at = out.find("{\"table\":\"results\"", at + 1))
    ++results;
  EXPECT_EQ(results, kRecords) << out.substr(0, 400);
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out.substr(out.size() > 400 ? out.size() - 400 : 0);
  EXPECT_FALSE(fs::exists(killed.string() + "-shm"));
}

// A foreign SQLite file with a -wal is still refused, and keeps nothing of ours beside it.
TEST(DbWal, AForeignFileWithAWalIsRefusedAndLeftAsItWas) {
  TempDir dir("ft-wal");
  const fs::path p = dir.path() / "theirs.db";
  {
    auto c = Connection::open(p.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    c.exec("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    // Copied while open: the -wal holds the table.
    write_bytes(dir.path() / "copy.db", read_bytes(p));
    write_bytes(dir.path() / "copy.db-wal", read_bytes(p.string() + "-wal"));
  }
  const fs::path copy = dir.path() / "copy.db";
  const std::string before = read_bytes(copy), wal = read_bytes(copy.string() + "-wal");
  try {
    (void)Database::open(copy.string());
    ADD_FAILURE() << "opened someone else's database";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a fusetune tuning database (an SQLite file with tables t"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_bytes(copy), before);
  EXPECT_EQ(read_bytes(copy.string() + "-wal"), wal);
  EXPECT_FALSE(fs::exists(copy.string() + "-shm"));
}

}  // namespace
}  // namespace fusetune::db
