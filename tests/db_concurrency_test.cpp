// Several tuner processes share one database (one per GPU), and a tuner may be killed at any
// moment: WAL mode, a busy timeout and BEGIN IMMEDIATE must make both safe. Real processes,
// not threads: each opens its own connection after fork, as separate tuners would.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "db/database.hpp"
#include "db_test_support.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::db {
namespace {

constexpr int kBatchSize = 20;

std::vector<ResultRecord> batch(int writer, int number) {
  std::vector<ResultRecord> out;
  for (int i = 0; i < kBatchSize; ++i)
    out.push_back(testing::result(fmt::format("w{}.b{}.r{}", writer, number, i), 1.0 + i));
  return out;
}

// Runs body in a child process; the child exits 0 when body returns, 1 when it throws.
template <class Body>
pid_t spawn(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
      code = 1;
    }
    _exit(code);  // not exit(): no gtest or static destructors in the child
  }
  return pid;
}

int exit_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// Rows per batch number of one writer, from the variant names "w<writer>.b<batch>.r<i>".
std::map<int, int> rows_per_batch(const Database& db, int writer) {
  std::map<int, int> rows;
  const std::string prefix = fmt::format("w{}.b", writer);
  for (const auto& r : db.results(std::nullopt, "", std::nullopt))
    if (r.variant_name.rfind(prefix, 0) == 0) ++rows[std::stoi(r.variant_name.substr(prefix.size()))];
  return rows;
}

TEST(DbConcurrency, TwoWriterProcessesLoseNothing) {
  TempDir dir("ft-db");
  const std::string path = (dir.path() / "shared" / "tuning.db").string();
  constexpr int kBatches = 50;
  // A start line: both children block on the pipe until the parent closes it, so they
  // create the (missing) file and write at the same moment.
  int start[2];
  ASSERT_EQ(pipe(start), 0);
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    children.push_back(spawn([&, writer] {
      close(start[1]);
      char c;
      (void)!read(start[0], &c, 1);
      auto db = Database::open(path);
      for (int b = 0; b < kBatches; ++b) db.write_results(testing::h200(), batch(writer, b));
    }));
  }
  close(start[0]);
  close(start[1]);
  for (pid_t pid : children) EXPECT_EQ(exit_status(pid), 0) << "a writer failed (its error is on stderr)";

  auto db = Database::open(path);
  int total = 0;
  for (int writer = 0; writer < 2; ++writer) {
    const auto rows = rows_per_batch(db, writer);
    EXPECT_EQ(rows.size(), size_t(kBatches));
    for (const auto& [b, n] : rows) {
      EXPECT_EQ(n, kBatchSize) << "writer " << writer << " batch " << b;
      total += n;
    }
  }
  EXPECT_EQ(total, 2 * kBatches * kBatchSize);
  const auto report = db.verify();
  EXPECT_TRUE(report.ok) << ::testing::PrintToString(report.problems);
}

TEST(DbConcurrency, AWriterKilledMidBatchLeavesEveryCommittedBatchAndNoPartOne) {
  TempDir dir("ft-db");
  const std::string path = (dir.path() / "tuning.db").string();
  int done[2];
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = spawn([&] {
    close(done[0]);
    auto db = Database::open(path);
    for (int b = 0;; ++b) {
      db.write_results(testing::h200(), batch(7, b));
      // Reported only once committed: everything reported must survive the kill.
      if (write(done[1], &b, sizeof b) != sizeof b) return;
    }
  });
  close(done[1]);
  std::vector<int> reported;
  int b = 0;
  while (reported.size() < 30 && read(done[0], &b, sizeof b) == sizeof b) reported.push_back(b);
  kill(child, SIGKILL);  // the child is already inside its next batch's transaction, or about to be
  EXPECT_EQ(exit_status(child), 128 + SIGKILL);
  while (read(done[0], &b, sizeof b) == sizeof b) reported.push_back(b);  // reported before it died
  close(done[0]);
  ASSERT_GE(reported.size(), 30u);

  auto db = Database::open(path);
  const auto report = db.verify();
  EXPECT_TRUE(report.ok) << ::testing::PrintToString(report.problems);
  const auto rows = rows_per_batch(db, 7);
  for (int r : reported) EXPECT_EQ(rows.count(r) ? rows.at(r) : 0, kBatchSize) << "reported batch " << r << " lost";
  for (const auto& [n, count] : rows) EXPECT_EQ(count, kBatchSize) << "batch " << n << " is half-written";
  EXPECT_LE(rows.size(), reported.size() + 1) << "at most the batch being reported when killed is extra";
}

}  // namespace
}  // namespace fusetune::db
