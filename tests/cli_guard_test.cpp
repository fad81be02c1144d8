// Issue 42's reproductions on the command line: outputs that would replace the database, reads
// without bound, and the smaller messages. Each ends in one line and the documented exit code,
// with the database untouched. GPU-free.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using testing::lines;
using testing::run;

class CliGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("cli_guard." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = path("t.db");
    ASSERT_EQ(run("query --db " + db_).code, 0);  // a database with the shipped records
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  // `args` must exit 2 with one line containing `fault`, and leave the database as it was.
  void expect_refused(const std::string& args, const std::string& fault) const {
    const std::string before = read(db_);
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fault), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(read(db_), before) << args << ": the database changed";
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(CliGuard, NoOutputReplacesTheDatabase) {
  fs::create_symlink(db_, path("link.db"));
  const std::string db = " --db " + db_;
  for (const char* format : {"cu", "ptx", "cubin", "torch", "kernelbench"})
    expect_refused(std::string("export --preset kernelbench-31 --format ") + format + db + " -o " + db_,
                   "is the tuning database");
  expect_refused("export --preset kernelbench-31 --format cu" + db + " -o " + path("link.db"), "is the tuning database");
  expect_refused("export --preset kernelbench-31 --format cu" + db + " -o " + db_ + "-wal", "tuning database's -wal");
  expect_refused("report --preset kernelbench-31" + db + " -o " + db_, "is the tuning database");
  expect_refused("db dump" + db + " -o " + db_, "is the tuning database");
  expect_refused("db dump" + db + " -o " + path("link.db"), "is the tuning database");
  expect_refused("query" + db + " --json " + path("link.db"), "is the tuning database");
  expect_refused("query" + db + " --csv " + db_ + "-shm", "tuning database's -shm");
  // Through another spelling of the folder.
  expect_refused("db dump" + db + " -o " + (dir_ / ".." / dir_.filename() / "t.db").string(), "is the tuning database");
  // tune's compile cache is the folder compile-cache beside the database: a database of that name.
  expect_refused("tune --preset kernelbench-31 --db " + path("compile-cache"), "is the tuning database");
}

TEST_F(CliGuard, DevicesFifosAndHugeFilesAreRefusedWhileReading) {
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused("db import /dev/zero --db " + db_, "a character device, not a regular file");
  expect_refused("export --format torch-patch --spec-file /dev/urandom --db " + db_, "a character device");
  expect_refused("tune --spec-file /dev/zero --db " + db_, "cannot read the spec file /dev/zero: it is a character device");
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  expect_refused("db import " + path("fifo") + " --db " + db_, "a FIFO (pipe), not a regular file");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  {
    std::ofstream big(path("big.txt"), std::ios::binary);
    big << std::string((size_t(16) << 20) + 1, '#');
  }
  expect_refused("export --format torch-patch --spec-file " + path("big.txt") + " --db " + db_, "16 MiB limit");
}

TEST_F(CliGuard, DatabaseFilesThatCannotBeOneAreRefusedInOneLine) {
  const auto r = run("query --db /dev/null");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("is a character device, not a database file"), std::string::npos) << r.err;
  // A link to the database itself is refused before any record is checked.
  fs::create_symlink(db_, path("self.db"));
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused("db merge " + path("self.db") + " --db " + db_, "it is the database itself");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST_F(CliGuard, MessagesNameWhatWentWrong) {
  // A SPEC after --json (whose value is optional) is not taken for a file name.
  const auto j = run("query --db " + db_ + " --json 'conv2d(n=1,c=1,h=4,w=4,k=1,r=1)'");
  EXPECT_EQ(j.code, 2) << j.err;
  EXPECT_NE(j.err.find("that is a spec, not a file name"), std::string::npos) << j.err;
  EXPECT_FALSE(fs::exists("conv2d(n=1,c=1,h=4,w=4,k=1,r=1)"));
  const auto f = run("query --db " + db_ + " --format xml");
  EXPECT_EQ(f.code, 2);
  EXPECT_EQ(f.err.find("fusetune: : "), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("--format must be table, json or csv, got 'xml'"), std::string::npos) << f.err;
  const auto d = run("db frob --db " + db_);
  EXPECT_EQ(d.code, 2);
  EXPECT_NE(d.err.find("unknown db subcommand 'frob' (one of: dump, import, merge, verify)"), std::string::npos)
      << d.err;
}

// Issue 42 (wording): query --all says which timing round each figure comes from; compile's
// table names layouts as tune's and query's do and keeps a failure's reason out of its rows.
TEST_F(CliGuard, TablesSayWhereFiguresComeFromAndNameLayouts) {
  const auto q = run("query --all --preset kernelbench-31 --math tf32 --db " + db_);
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_NE(q.out.find(" round "), std::string::npos) << q.out;
  EXPECT_NE(q.out.find("conf"), std::string::npos) << q.out;
  const auto c = run("compile 'conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | relu' --arch sm_90 -q");
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("layout=nchw"), std::string::npos);
  EXPECT_EQ(c.out.find("layout=0"), std::string::npos);
  for (size_t at = 0, eol; at < c.out.size(); at = eol + 1) {
    eol = c.out.find('\n', at);
    if (eol == std::string::npos) eol = c.out.size();
    EXPECT_LE(eol - at, 130u) << c.out.substr(at, eol - at);
  }
}

// A write to stdout that fails is one line, exit 1 (it was "internal error: cannot write to
// file" and a second line).
TEST_F(CliGuard, AFailedWriteToStandardOutputIsOneLine) {
  const auto r = run("db dump --db " + db_ + " > /dev/full");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  const auto q = run("query --db " + db_ + " > /dev/full");
  EXPECT_EQ(q.code, 1);
  EXPECT_EQ(lines(q.err), 1u) << q.err;
  EXPECT_EQ(q.err.find("internal error"), std::string::npos) << q.err;
}

}  // namespace
}  // namespace fusetune

namespace fusetune {
namespace {

// A new database on a full disk: one line saying so, and no empty file left behind for the next
// command to take for a new database (issue 42: "disk I/O error" and a 4 KiB file).
TEST(CliFullDisk, ANewDatabaseOnAFullDiskLeavesNoFile) {
  if (std::system("unshare -m sh -c 'mount -t tmpfs -o size=4k tmpfs /mnt' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root and unshare -m)";
  const std::string log = ::testing::TempDir() + "cli_full." + std::to_string(getpid()) + ".txt";
  std::string shown;
  testing::read_pipe("unshare -m sh -c 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && " +
                         std::string(FUSETUNE_BINARY) + " query --db $d/t.db 2>" + log + "; echo exit=$?; ls -A $d'",
                     shown);
  std::ifstream f(log);
  const std::string err{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  std::remove(log.c_str());
  EXPECT_EQ(shown, "exit=2\n") << err;
  EXPECT_EQ(lines(err), 1u) << err;
  EXPECT_NE(err.find("cannot write it (database or disk is full"), std::string::npos) << err;
}

}  // namespace
}  // namespace fusetune
