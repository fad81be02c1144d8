// Sweeps through the command line, GPU-free (the tuner's worker is tests/fake_worker.cpp, whose
// figures are deterministic): a --spec-file tuned in 4 shards, each into its own database, and
// merged (`db merge`, in a shuffled order) is the database one process writes for the whole
// list, record for record but for the times the records were written; a problem's variants
// split in 4 shards and merged give a final `tune` the same winner as one run; a bad line or
// flag is exit 2 before any GPU work.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using testing::run;

const std::string kWorker = std::string("FUSETUNE_TEST_WORKER=") + FUSETUNE_FAKE_WORKER + " ";

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("cli_sweep." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name)) << text; }

  // The database's records as dump lines without their created_at (when a record was written
  // differs from run to run; everything else must not), sorted as the dump sorts them.
  std::vector<std::string> records(const std::string& db) const {
    const auto r = run("db dump --db " + path(db));
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      j.erase("created_at");
      out.push_back(j.dump());
    }
    return out;
  }

  fs::path dir_;
};

// Five problems, one of them twice, comments and a blank line: what a sweep's file looks like.
constexpr const char* kSweep =
    "# a small sweep\n"
    "conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu\n"
    "conv2d(n=1,c=4,h=8,w=8,k=4,r=3) | mul(2) | reduce_min(channel)   # a reduction\n"
    "\n"
    "conv2d(n=1,c=8,h=6,w=6,k=8,r=1) | sigmoid\n"
    "conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu\n"
    "conv2d(n=2,c=4,h=5,w=5,k=4,r=3,pad=1) | add(param[k]) | gelu\n"
    "conv2d(n=1,c=3,h=7,w=7,k=5,r=3) | clamp(-1,1)\n";

TEST_F(Sweep, FourShardsMergedAreTheDatabaseOfOneRun) {
  write("sweep.txt", kSweep);
  const std::string common = " -q -j2 --spec-file " + path("sweep.txt");
  auto r = run("tune" + common + " --db " + path("one.db"), kWorker);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep    5 of the 5 problems"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("sweep.txt:6: the problem of line 2 again: tuned once"), std::string::npos) << r.err;

  std::set<std::string> lines_tuned;
  for (int i = 0; i < 4; ++i) {
    const std::string shard = std::to_string(i) + "/4";
    r = run("tune" + common + " --shard " + shard + " --db " + path("shard" + std::to_string(i) + ".db"), kWorker);
    ASSERT_EQ(r.code, 0) << shard << ": " << r.err;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("[")) continue;
      EXPECT_TRUE(lines_tuned.insert(line.substr(line.find(' ') + 1)).second) << line;
    }
  }
  // Every problem in exactly one shard: the 2nd line's duplicate (line 6) in none.
  EXPECT_EQ(lines_tuned.size(), 5u);
  EXPECT_EQ(lines_tuned.count(path("sweep.txt") + ":6"), 0u);

  // Merged out of order: the conflict rules are an order, not "first come".
  r = run("db merge " + path("shard2.db") + " " + path("shard0.db") + " " + path("shard3.db") + " " +
          path("shard1.db") + " --db " + path("merged.db"));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto merged = records("merged.db");
  const auto one = records("one.db");
  EXPECT_GT(one.size(), 100u);
  EXPECT_EQ(merged, one);

  // Merging a shard again changes nothing, and neither does merging the one run's database.
  r = run("db merge " + path("shard1.db") + " " + path("one.db") + " --db " + path("merged.db"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(records("merged.db"), one);
}

TEST_F(Sweep, AProblemsVariantsInFourShardsGiveTheFinalTuneTheSameWinner) {
  const std::string spec = "\"conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu\"";
  // Exhaustive: every variant, which the four shards of the variants (exhaustive by default) split.
  auto r = run("tune " + spec + " -q -j2 --strategy exhaustive --db " + path("one.db") + " --json " + path("one.json"),
               kWorker);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto one = nlohmann::json::parse(std::ifstream(path("one.json")));
  std::set<std::string> all;
  for (const auto& x : one["results"]) all.insert(x["name"].get<std::string>());

  std::map<std::string, int> seen;  // variant -> shards that ran it
  std::vector<std::string> shards;
  for (int i = 0; i < 4; ++i) {
    const std::string db = path("shard" + std::to_string(i) + ".db");
    const std::string json = path("shard" + std::to_string(i) + ".json");
    r = run("tune " + spec + " -q -j2 --shard " + std::to_string(i) + "/4 --db " + db + " --json " + json, kWorker);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("best of shard " + std::to_string(i) + "/4: "), std::string::npos) << r.out;
    const auto doc = nlohmann::json::parse(std::ifstream(json));
    EXPECT_EQ(doc["shard"], (nlohmann::json{{"index", i}, {"count", 4}}));
    for (const auto& x : doc["results"]) ++seen[x["name"].get<std::string>()];
    // A shard's best is not the problem's winner: nothing but the shipped winners is stored.
    r = run("query --json --db " + db);
    for (const auto& w : nlohmann::json::parse(r.out)["winners"]) EXPECT_TRUE(w["shipped"].get<bool>()) << w.dump();
    shards.push_back(db);
  }
  // Every variant ran in exactly one shard, the baselines and floors in all of them.
  std::set<std::string> union_names;
  for (const auto& [name, n] : seen) {
    union_names.insert(name);
    const bool everywhere = name.starts_with("unfused") || name.starts_with("cudnn.");
    EXPECT_EQ(n, everywhere ? 4 : 1) << name;
  }
  EXPECT_EQ(union_names, all);

  r = run("db merge " + shards[3] + " " + shards[1] + " " + shards[0] + " " + shards[2] + " --db " + path("merged.db"));
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("tune " + spec + " -q -j2 --db " + path("merged.db") + " --json " + path("final.json"), kWorker);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("stored without a winner (merged shards"), std::string::npos) << r.out;
  const auto final_doc = nlohmann::json::parse(std::ifstream(path("final.json")));
  EXPECT_EQ(final_doc["winner"]["name"], one["winner"]["name"]);
  EXPECT_EQ(final_doc["tie"], one["tie"]);
}

TEST_F(Sweep, BadInputIsRefusedBeforeAnyGpuWork) {
  // No fake worker and no GPU here: exit 2 (not 3, "no NVIDIA driver") shows nothing reached
  // for the GPU; the database is not created either when the list is bad.
  write("bad.txt", "conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | relu\n# fine so far\nconv2d(n=1,c=4,h=9,w=7,k=3,r=3) | rleu\n");
  auto r = run("tune --spec-file " + path("bad.txt") + " --db " + path("t.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fusetune: " + path("bad.txt") +
                       ":3: spec error at column 35: unknown op 'rleu'; did you mean 'relu'?\n");
  EXPECT_FALSE(fs::exists(path("t.db")));

  // A valid version-2 line no candidate takes yet: named by its line, before the database or GPU.
  // A version-2 problem past the float64 reference's limit (worker::why_no_model_reference).
  write("v2.txt", "conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | relu\nlinear(m=65536,k=65536,n=4096) | softmax(0)\n");
  r = run("tune --spec-file " + path("v2.txt") + " --db " + path("t.db"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("v2.txt:2: the float64 reference (on the GPU) is limited to 1e+13 multiply-adds"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("t.db")));

  write("ok.txt", "kernelbench-31\n");
  for (const std::string& args : std::vector<std::string>{"--spec-file " + path("missing.txt"), "--spec-file " + path("ok.txt") + " --shard 4/4",
                                 "--spec-file " + path("ok.txt") + " --shard 1", "--preset kernelbench-31 --shard 0/0",
                                 "--spec-file " + path("ok.txt") + " --preset kernelbench-31",
                                 "--spec-file " + path("ok.txt") + " --json " + path("x.json"),
                                 "--spec-file " + path("ok.txt") + " --csv -"}) {
    r = run("tune " + args + " --db " + path("t.db"));
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(testing::lines(r.err), 1u) << r.err;
  }
  r = run("tune --spec-file " + path("ok.txt") + " --shard 4/4");
  EXPECT_NE(r.err.find("--shard: must be I/N with 0 <= I < N"), std::string::npos) << r.err;

  // A shard that holds none of the problems has nothing to do: no GPU needed, and its database
  // (the shipped records only) still exists for the merge.
  r = run("tune --spec-file " + path("ok.txt") + " --shard 1/2 --db " + path("empty.db"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep    shard 1/2: 0 of the 1 problems"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(path("empty.db")));
}

TEST_F(Sweep, MergeChecksEveryFileFirstAndNeverChangesThem) {
  write("sweep.txt", "conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu\n");
  auto r = run("tune -q -j2 --spec-file " + path("sweep.txt") + " --db " + path("a.db"), kWorker);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto before = records("out.db");
  write("junk.db", "not a database at all, just text that is long enough to have a header's size........"
                   "................................................................................");
  r = run("db merge " + path("a.db") + " " + path("junk.db") + " --db " + path("out.db"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(records("out.db"), before) << "a refused file leaves the database as it was, the good one not merged";
  r = run("db merge " + path("out.db") + " --db " + path("out.db"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("it is the database itself"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fusetune
