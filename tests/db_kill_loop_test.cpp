// Issue 42's kill loop: fusetune killed with SIGKILL at random points while it creates a
// database, imports a dump, tunes (with the fake worker) and merges a shard; after every kill
// the database must open as the next command would open it, verify, and hold every record that
// was committed before the kill. 200 kills, 0 bricked, 0 lost. GPU-free; about a minute on two
// cores (each command is a few hundred milliseconds).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_run.hpp"
#include "common/error.hpp"
#include "common/temp_dir.hpp"
#include "db/database.hpp"
#include "db_test_support.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kKills = 200;

// Starts the binary in its own process group (the tuner's worker is killed with it), output
// discarded.
pid_t spawn(const std::vector<std::string>& args, bool with_worker) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  if (with_worker) setenv("FUSETUNE_TEST_WORKER", FUSETUNE_FAKE_WORKER, 1);
  if (FILE* null = std::fopen("/dev/null", "w")) {
    dup2(fileno(null), 1);
    dup2(fileno(null), 2);
  }
  std::vector<char*> argv;
  std::string bin = FUSETUNE_BINARY;
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(bin.c_str(), argv.data());
  _exit(127);
}

struct Op {
  std::string name;
  std::vector<std::string> args;
  bool worker = false;
};

// Runs `op` to completion: its exit code and how long it took.
std::pair<int, double> run_whole(const Op& op) {
  const auto t0 = Clock::now();
  const pid_t pid = spawn(op.args, op.worker);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::chrono::duration<double>(Clock::now() - t0).count()};
}

// Runs `op` and kills it (its whole process group) after `delay` seconds: whether it was still
// running then, so that the kill counts.
bool run_killed(const Op& op, double delay) {
  const pid_t pid = spawn(op.args, op.worker);
  std::this_thread::sleep_for(std::chrono::duration<double>(delay));
  int status = 0;
  const bool running = waitpid(pid, &status, WNOHANG) == 0;
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  if (running) waitpid(pid, &status, 0);
  return running;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Opens the database as the next command would (read-write: SQLite recovers the WAL), checks
// it and counts its results; "" and the count, or what failed.
std::pair<std::string, size_t> open_verify_count(const std::string& path) {
  try {
    auto db = db::Database::open(path, db::OpenOptions{.load_shipped = false});
    const auto report = db.verify();
    if (!report.ok) return {"verify: " + report.problems.front(), 0};
    return {"", db.results(std::nullopt, "", std::nullopt).size()};
  } catch (const std::exception& e) {
    return {e.what(), 0};
  }
}

// Result lines of `dump` (a fusetune dump) made into new records: one more parameter ("kl" =
// `tag`) gives each a new identity, so an import or a merge of them writes pages.
// At most kNewPerCommand of them: enough for many pages (and a checkpoint now and then) per
// command while the database stays small enough to verify after every kill.
constexpr size_t kNewPerCommand = 120;

std::string new_records(const std::string& dump, int tag) {
  std::string out;
  size_t at = 0, made = 0;
  while (at < dump.size()) {
    const size_t eol = dump.find('\n', at);
    std::string line = dump.substr(at, eol - at + 1);
    at = eol == std::string::npos ? dump.size() : eol + 1;
    const bool result = line.find("{\"table\":\"results\"") == 0;
    const size_t p = line.find("\"params_json\":\"{\\\"");
    if (!line.starts_with("{\"fusetune_dump\"") && !line.starts_with("{\"table\":\"environments\"") &&
        !line.starts_with("{\"table\":\"problems\"") && !(result && p != std::string::npos))
      continue;
    if (result && ++made > kNewPerCommand) continue;
    if (result) line.insert(p + 16, "\\\"kl\\\":" + std::to_string(tag) + ",");
    out += line;
  }
  return out;
}

TEST(DbKillLoop, TwoHundredKillsBrickNothingAndLoseNothing) {
  const TempDir dir("ft-kill");
  const auto path = [&](const std::string& name) { return (dir.path() / name).string(); };
  const std::string main_db = path("main.db");
  // The database every kill hits, with the shipped records; a dump of it to make records from.
  ASSERT_EQ(run_whole({"query", {"query", "--db", main_db}}).first, 0);
  ASSERT_EQ(run_whole({"dump", {"db", "dump", "--db", main_db, "-o", path("all.jsonl")}}).first, 0);
  const std::string all = read(path("all.jsonl"));
  const size_t shipped_results = open_verify_count(main_db).second;
  ASSERT_GT(shipped_results, 10u);

  std::mt19937 rng(42);
  const char* specs[] = {"conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu", "conv2d(n=1,c=8,h=6,w=6,k=8,r=1) | sigmoid"};
  // Each kind of command, and how long it takes when nobody kills it: kills land in [0, 1.2x that].
  int tag = 0;
  const auto make = [&](int kind) -> Op {
    ++tag;
    switch (kind) {
      case 0:  // create: a new database gets the schema and the shipped records
        fs::remove(path("new.db"));
        fs::remove(path("new.db-wal"));
        fs::remove(path("new.db-shm"));
        return {"create", {"query", "--db", path("new.db")}};
      case 1: {
        std::ofstream(path("import.jsonl"), std::ios::binary) << new_records(all, tag);
        return {"import", {"db", "import", path("import.jsonl"), "--trust", "--db", main_db}};
      }
      case 2:
        return {"tune", {"tune", specs[tag % 2], "-q", "--force", "--db", main_db}, true};
      default: {
        fs::remove(path("shard.db"));
        auto shard = db::Database::open(path("shard.db"), db::OpenOptions{.load_shipped = false});
        shard.import_dump(new_records(all, tag));
        return {"merge", {"db", "merge", path("shard.db"), "--trust", "--db", main_db}};
      }
    }
  };
  double whole[4] = {};
  for (int kind = 0; kind < 4; ++kind) {
    const auto [code, seconds] = run_whole(make(kind));
    ASSERT_EQ(code, 0) << "kind " << kind << " fails even unkilled";
    whole[kind] = seconds;
  }

  int kills = 0, bricked = 0, lost = 0;
  std::string first_problem;
  const auto t0 = Clock::now();
  for (int i = 0; kills < kKills && i < 3 * kKills; ++i) {
    const int kind = int(rng() % 4);
    const Op op = make(kind);
    const std::string target = kind == 0 ? path("new.db") : main_db;
    const size_t before = kind == 0 ? 0 : open_verify_count(main_db).second;
    const double delay = std::uniform_real_distribution<double>(0, 1.2 * whole[kind])(rng);
    kills += run_killed(op, delay);
    const auto [problem, after] = open_verify_count(target);
    if (!problem.empty()) {
      ++bricked;
      if (first_problem.empty()) first_problem = op.name + ": " + problem;
    } else if (kind == 0 ? (after != 0 && after != shipped_results) : after < before) {
      ++lost;
      if (first_problem.empty())
        first_problem = op.name + ": " + std::to_string(after) + " results after the kill, " + std::to_string(before) +
                        " before";
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("%d kills in %.0f s: %d bricked, %d lost\n", kills, seconds, bricked, lost);
  EXPECT_GE(kills, kKills);
  EXPECT_EQ(bricked, 0) << first_problem;
  EXPECT_EQ(lost, 0) << first_problem;
  // And the command line agrees at the end.
  const auto r = testing::run("db verify --db " + main_db);
  EXPECT_EQ(r.out.find("problem: integrity"), std::string::npos) << r.out;
  EXPECT_NE(testing::run("query --db " + main_db).code, 2);
}

}  // namespace
}  // namespace fusetune
