// Checked writes (common/output_file.hpp) and the commands that use them, on a full disk: a
// failed write is exit 1 with one line, the old file is untouched and no partial file is left.
// A full file system is simulated with a file-size limit (RLIMIT_FSIZE, `ulimit -f`), which
// makes write() fail with EFBIG exactly as ENOSPC would, without mounting anything; /dev/full
// gives ENOSPC itself for targets that are devices. GPU-free.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Lowers the file-size limit for the scope (the test process ignores SIGXFSZ meanwhile).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(OutputFile, WritesANewFileAndReplacesAnOldOneKeepingItsPermissions) {
  fusetune::TempDir dir("ft-out");
  const fs::path p = dir.path() / "a.txt";
  fusetune::write_output_file(p.string(), "first");
  EXPECT_EQ(read(p), "first");
  ::chmod(p.c_str(), 0640);
  fusetune::write_output_file(p.string(), "second");
  EXPECT_EQ(read(p), "second");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u);  // no temporary file left
}

TEST(OutputFile, AFullDiskLeavesTheOldFileAndNoPartialFile) {
  fusetune::TempDir dir("ft-out");
  const fs::path p = dir.path() / "dump.jsonl";
  fusetune::write_output_file(p.string(), "the old contents\n");
  const std::string big(256 * 1024, 'x');
  {
    FileSizeLimit limit(64 * 1024);
    try {
      fusetune::write_output_file(p.string(), big);
      FAIL() << "a write past the file-size limit succeeded";
    } catch (const fusetune::Error& e) {
      EXPECT_EQ(e.code(), fusetune::ExitCode::failure);
      EXPECT_NE(std::string(e.what()).find("dump.jsonl"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read(p), "the old contents\n");
  EXPECT_EQ(entries(dir.path()), 1u);
}

TEST(OutputFile, DevicesAreWrittenIntoNotReplaced) {
  EXPECT_THROW(fusetune::write_output_file("/dev/full", "x"), fusetune::Error);
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));  // still the device
  fusetune::write_output_file("/dev/null", "discarded");
}

TEST(OutputFile, ADirectoryIsBadInput) {
  fusetune::TempDir dir("ft-out");
  try {
    fusetune::write_output_file(dir.path().string(), "x");
    FAIL();
  } catch (const fusetune::Error& e) {
    EXPECT_EQ(e.code(), fusetune::ExitCode::bad_input);
  }
}

// --- the commands --------------------------------------------------------------------------

struct CliRun {
  int code = -1;
  std::string err;
};

// `sh -c "<prefix>; fusetune <args>"`, stdout to `out`.
CliRun run(const std::string& prefix, const std::string& args, const std::string& out = "/dev/null") {
  static int calls = 0;
  const std::string err_file = testing::TempDir() + "out_test_err." + std::to_string(getpid()) + "." +
                               std::to_string(calls++);
  const std::string cmd =
      "sh -c '" + prefix + "; exec " + FUSETUNE_BINARY + " " + args + " >" + out + " 2>" + err_file + "'";
  CliRun r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read(err_file);
  std::remove(err_file.c_str());
  return r;
}

using fusetune::testing::lines;

class FullDisk : public testing::Test {
 protected:
  void SetUp() override {
    db_ = (dir_.path() / "t.db").string();
    // A database with the shipped records (a dump of about 0.8 MB, winners for every format).
    ASSERT_EQ(run("true", "db verify --db " + db_).code, 0);
  }

  static bool can_mount_tmpfs() {
    return std::system("unshare -m sh -c 'mount -t tmpfs -o size=4k tmpfs /mnt' >/dev/null 2>&1") == 0;
  }

  struct FullRun {
    std::string shown;  // "exit=N", then the output file, then the folder's listing
    std::string err;    // the command's stderr
  };
  // Runs `command` (stderr captured) with $d a fresh 4 KiB tmpfs holding $d/out = "previous", in a
  // private mount namespace; the shell reports the folder afterwards, since the mount ends with it.
  FullRun on_full_tmpfs(const std::string& command) const {
    const fs::path log = dir_.path() / "log.txt";
    const std::string script = "d=$(mktemp -d) && mount -t tmpfs -o size=4k tmpfs $d && echo previous > $d/out && " +
                               command + " 2>" + log.string() + "; echo exit=$?; cat $d/out; ls -A $d";
    FullRun r;
    fusetune::testing::read_pipe("unshare -m sh -c '" + script + "'", r.shown);
    r.err = read(log);
    return r;
  }

  fusetune::TempDir dir_{"ft-full"};
  std::string db_;
};

// A real full file system (FullDisk::on_full_tmpfs; needs root and unshare, as on the CI machine),
// holding only the output; the database stays outside it.
TEST_F(FullDisk, DumpAndExportsOnAFullTmpfsFailWithOneLineAndLeaveTheOldFile) {
  if (!can_mount_tmpfs())
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root and unshare -m); the writer's own test covers it";
  for (const std::string args : {"db dump", "export --preset kernelbench-31 --format cu",
                                 "export --preset kernelbench-31 --format torch",
                                 "export --preset kernelbench-32 --format ptx",
                                 "export --preset kernelbench-32 --format cubin"}) {
    SCOPED_TRACE(args);
    const FullRun r = on_full_tmpfs(std::string(FUSETUNE_BINARY) + " " + args + " --db " + db_ + " -o $d/out");
    EXPECT_EQ(r.shown, "exit=1\nprevious\nout\n") << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  }
}

TEST_F(FullDisk, TuneJsonOnAFullTmpfsFailsAndLeavesTheOldFile) {
  // A whole tune through the command line, its worker the GPU-free fake one (tests/fake_worker.cpp):
  // the table is printed and the database written, and the --json report (about 80 KB) does not fit.
  if (!can_mount_tmpfs())
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root and unshare -m); the writer's own test covers it";
  const FullRun r = on_full_tmpfs("FUSETUNE_TEST_WORKER=" FUSETUNE_FAKE_WORKER " " FUSETUNE_BINARY
                                  " tune \"conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu\" --force --db " +
                                  db_ + " --json $d/out >/dev/null");
  EXPECT_EQ(r.shown, "exit=1\nprevious\nout\n") << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
}

TEST_F(FullDisk, StandardOutputOnAFullDeviceIsAFailure) {
  for (const std::string args :
       {"db dump", "query", "query --format json", "query --format csv", "export --preset kernelbench-32 --format cu"}) {
    SCOPED_TRACE(args);
    const CliRun r = run("true", args + " --db " + db_, "/dev/full");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  }
  const CliRun r = run("true", "db dump -o /dev/full --db " + db_);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
}

}  // namespace
