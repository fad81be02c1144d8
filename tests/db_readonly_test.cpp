// A tuning database in a folder nobody may write (a read-only mount, even for root): the
// commands that only read still work and say nothing is damaged; a command that writes says it
// cannot write the file (exit 2), and nothing is created beside it. GPU-free; needs root and
// `unshare -m` for the read-only mount (skips with the reason otherwise).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/temp_dir.hpp"

namespace {

std::string sh(const std::string& script) {
  std::string out;
  FILE* p = popen(("unshare -m sh -c '" + script + "' 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

TEST(DbReadOnly, ReadingCommandsWorkInAReadOnlyFolderAndWritesSaySo) {
  if (std::system("unshare -m sh -c 'mount --bind /tmp /mnt && mount -o remount,ro,bind /mnt' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "cannot make a read-only bind mount here (needs root and unshare -m)";
  fusetune::TempDir dir("ft-ro");
  const std::string d = dir.path().string();
  const std::string bin = FUSETUNE_BINARY;
  ASSERT_EQ(std::system((bin + " db verify --db " + d + "/t.db >/dev/null").c_str()), 0);  // created, with records
  const std::string ro = "mount --bind " + d + " " + d + " && mount -o remount,ro,bind " + d + " && ";
  auto run = [&](const std::string& args) { return sh(ro + bin + " " + args + " --db " + d + "/t.db; echo exit=$?"); };

  std::string out = run("query");
  EXPECT_NE(out.find("NVIDIA H200"), std::string::npos) << out;
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
  out = run("db verify");
  EXPECT_NE(out.find(": ok"), std::string::npos) << out;
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
  out = run("export --preset kernelbench-31 --format cu");
  EXPECT_NE(out.find("fusetune_run_epilogue"), std::string::npos) << out;
  EXPECT_NE(out.find("exit=0"), std::string::npos) << out;
  out = run("db dump");
  EXPECT_NE(out.find("\"fusetune_dump\""), std::string::npos) << out;
  out = run("db import /dev/null");
  EXPECT_NE(out.find("cannot write it"), std::string::npos) << out;
  EXPECT_EQ(out.find("damaged"), std::string::npos) << out;
  EXPECT_NE(out.find("exit=2"), std::string::npos) << out;
  EXPECT_EQ(std::system(("test ! -e " + d + "/t.db-shm && test ! -e " + d + "/t.db-wal").c_str()), 0)
      << "files left beside the database";
}

}  // namespace
