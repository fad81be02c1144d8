// Issue 42: the one bounded reader and line splitter (common/bounded_read.hpp, common/lines.hpp)
// and the one guard that keeps an output from replacing the tuning database
// (common/output_guard.hpp). GPU-free.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/bounded_read.hpp"
#include "common/error.hpp"
#include "common/lines.hpp"
#include "common/output_guard.hpp"
#include "common/temp_dir.hpp"
#include "spec/spec_list.hpp"

namespace fs = std::filesystem;
using fusetune::InputError;
using fusetune::TempDir;

namespace {

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

std::string refusal(const std::string& path, size_t limit) {
  try {
    (void)fusetune::read_bounded_file(path, "the spec file", limit);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string guard(const std::string& out, const std::string& db) {
  try {
    fusetune::refuse_database_output(out, db);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(BoundedRead, ReadsARegularFileWhole) {
  TempDir dir("ft-read");
  write_bytes(dir.path() / "a", "conv2d(n=1)\n");
  EXPECT_EQ(fusetune::read_bounded_file((dir.path() / "a").string(), "the spec file", 100), "conv2d(n=1)\n");
  EXPECT_EQ(fusetune::read_bounded_file((dir.path() / "a").string(), "the spec file", 12), "conv2d(n=1)\n");
}

TEST(BoundedRead, AFileOverTheLimitIsRefusedNamingTheLimit) {
  TempDir dir("ft-read");
  write_bytes(dir.path() / "big", std::string(size_t(2) << 20, 'x'));
  const std::string why = refusal((dir.path() / "big").string(), size_t(1) << 20);
  EXPECT_NE(why.find("1 MiB limit"), std::string::npos) << why;
  EXPECT_NE(why.find("the spec file"), std::string::npos) << why;
}

// /dev/zero never ends: refused at once, without reading (it used to grow to 16 GB).
TEST(BoundedRead, DevicesAreRefusedWithoutReading) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_NE(refusal("/dev/zero", size_t(1) << 30).find("a character device, not a regular file"), std::string::npos);
  EXPECT_NE(refusal("/dev/urandom", size_t(1) << 30).find("character device"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

// A FIFO with no writer: refused at once, never a hang.
TEST(BoundedRead, AFifoWithoutAWriterIsRefusedAtOnce) {
  TempDir dir("ft-read");
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal(fifo.string(), 100).find("a FIFO (pipe), not a regular file"), std::string::npos);
}

TEST(BoundedRead, MissingFilesAndDirectoriesAreRefused) {
  TempDir dir("ft-read");
  EXPECT_NE(refusal((dir.path() / "none").string(), 100).find("no such file"), std::string::npos);
  EXPECT_NE(refusal(dir.path().string(), 100).find("a directory"), std::string::npos);
}

TEST(Lines, SplitsOnNewlineDropsCarriageReturnsAndALeadingByteOrderMark) {
  std::vector<std::pair<size_t, std::string>> got;
  fusetune::for_each_line("\xEF\xBB\xBF" "a\r\n\nb", [&](size_t n, std::string_view l) { got.emplace_back(n, l); });
  const std::vector<std::pair<size_t, std::string>> want = {{1, "a"}, {2, ""}, {3, "b"}};
  EXPECT_EQ(got, want);
  size_t calls = 0;
  fusetune::for_each_line("", [&](size_t, std::string_view) { ++calls; });
  EXPECT_EQ(calls, 0u);
}

TEST(OutputGuard, TheDatabaseItsWalAndShmAreRefused) {
  TempDir dir("ft-guard");
  const std::string db = (dir.path() / "t.db").string();
  write_bytes(db, "x");
  EXPECT_NE(guard(db, db).find("is the tuning database"), std::string::npos);
  // -wal and -shm exist only while a connection is open: refused whether they exist or not.
  EXPECT_NE(guard(db + "-wal", db).find("-wal"), std::string::npos);
  write_bytes(db + "-shm", "");
  EXPECT_NE(guard(db + "-shm", db).find("-shm"), std::string::npos);
  EXPECT_EQ(guard((dir.path() / "other.cu").string(), db), "");
  EXPECT_EQ(guard("-", db), "");
  EXPECT_EQ(guard(db, ":memory:"), "");
}

TEST(OutputGuard, LinksAndOtherSpellingsOfTheDatabaseAreRefused) {
  TempDir dir("ft-guard");
  const fs::path db = dir.path() / "t.db";
  write_bytes(db, "x");
  fs::create_symlink(db, dir.path() / "link");
  fs::create_hard_link(db, dir.path() / "hard");
  fs::create_directory(dir.path() / "sub");
  fs::create_directory_symlink(dir.path(), dir.path() / "up");
  // A link to a -wal that does not exist yet (dangling): still the database's.
  fs::create_symlink(dir.path() / "t.db-wal", dir.path() / "walink");
  for (const fs::path& p : {dir.path() / "link", dir.path() / "hard", dir.path() / "sub" / ".." / "t.db",
                            dir.path() / "up" / "t.db", dir.path() / "up" / "t.db-wal", dir.path() / "walink"})
    EXPECT_NE(guard(p.string(), db.string()), "") << p;
  // The database named through a link, the output by its own name.
  EXPECT_NE(guard(db.string(), (dir.path() / "link").string()), "");
  EXPECT_TRUE(fusetune::same_file((dir.path() / "hard").string(), db.string()));
  EXPECT_FALSE(fusetune::same_file((dir.path() / "sub").string(), db.string()));
}

// Issue 42: a spec file saved with a UTF-8 byte order mark (as some editors do) reads as without.
TEST(Lines, ASpecFileWithAByteOrderMarkParses) {
  const auto listed = fusetune::spec::parse_spec_list("\xEF\xBB\xBF" "conv2d(n=1,c=4,h=8,w=8,k=4,r=3) | relu\r\n", "f.txt");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].line, 1u);
}
