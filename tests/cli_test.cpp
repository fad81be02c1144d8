// The command line as users and scripts see it: exit codes, one-line errors, JSON output.
// Runs the built binary; GPU-free (on a GPU machine the no-driver cases are skipped).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli_run.hpp"
#include "csv_test_support.hpp"
#include "db/database.hpp"
#include "db_test_support.hpp"
#include "gpu/driver_api.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "common/temp_dir.hpp"

namespace {

using fusetune::testing::lines;
using fusetune::testing::run;

constexpr const char* kSmall = "'conv2d(n=1,c=4,h=9,w=7,k=3,r=3,pad=1) | relu | add(param[k])'";

TEST(Cli, HelpExitsZero) {
  auto r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("compile"), std::string::npos);
  EXPECT_NE(r.out.find("tune"), std::string::npos);
}

TEST(Cli, BadSpecIsOneLineExit2) {
  auto r = run("compile 'conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | rleu'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("column 35"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'relu'"), std::string::npos) << r.err;
}

// A preset's name given as the SPEC: one line naming the flag that takes it.
TEST(Cli, APresetNameAsTheSpecPointsToPreset) {
  auto r = run("compile kernelbench-31");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("use --preset kernelbench-31"), std::string::npos) << r.err;
}

TEST(Cli, UnknownPresetUnknownFlagAndBothInputsExit2) {
  for (const char* args : {"compile --preset kernelbench-99", "compile --preset kernelbench-31 --bogus",
                           "tune --preset kernelbench-31 'conv2d(n=1,c=1,h=3,w=3,k=1,r=1)'",
                           "compile --preset kernelbench-31 --arch sm_12", "tune --preset kernelbench-31 --math fp16",
                           "compile", "frobnicate"}) {
    auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
  }
}

TEST(Cli, CompileJsonEveryVariantOk) {
  auto r = run(std::string("compile ") + kSmall + " --json --arch sm_90");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "fusetune.compile/2");
  EXPECT_EQ(j["arch"], "sm_90");
  ASSERT_GT(j["variants"].size(), 4u);
  for (const auto& v : j["variants"]) {
    EXPECT_EQ(v["status"], "ok") << v.dump();
    // A library step (cuDNN) has no generated code: its compile figures are null, not 0.
    if (v["compiled"] == true)
      EXPECT_EQ(v["spill_stores"], 0) << v.dump();
    else
      EXPECT_TRUE(v["spill_stores"].is_null()) << v.dump();
  }
  EXPECT_EQ(j["summary"]["failed"], 0);
}

TEST(Cli, CompileTableNamesEveryCandidate) {
  auto r = run(std::string("compile ") + kSmall + " --arch sm_80");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* c : {"unfused", "cudnn", "epilogue"}) EXPECT_NE(r.out.find(c), std::string::npos) << c;
  EXPECT_NE(r.out.find("0 failed"), std::string::npos);
}

TEST(Cli, GpuCommandsWithoutDriverExit3) {
  std::string why;
  if (fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "a GPU driver is present: the no-GPU path can't be shown here";
  for (const char* args : {"tune --preset kernelbench-31", "devices", "devices --json"}) {
    auto r = run(args);
    EXPECT_EQ(r.code, 3) << args;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("no NVIDIA driver"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(Cli, BadSpecBeatsMissingGpu) {
  // Input is checked before the GPU: a bad spec is exit 2 even on a machine without one.
  auto r = run("tune 'conv2d(n=0,c=1,h=3,w=3,k=1,r=1)'");
  EXPECT_EQ(r.code, 2) << r.err;
}

TEST(Cli, NonAsciiInASpecIsNamed) {
  auto r = run("compile 'conv2d(n=1,c=4,h=9,w=7,k=3,r=3) | r\xc3\xa9lu'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "fusetune: spec error at column 36: non-ASCII character '\xc3\xa9' (U+00E9); op names and keys are "
                   "lowercase ASCII\n");
}

// Every numeric flag of every command is checked when the command line is parsed: exit 2 before
// anything runs (no database opened, no GPU looked for), one short line naming the flag and its
// range in plain numbers.
TEST(Cli, NumericFlagsOutOfRangeAreRefusedWhenParsed) {
  struct Case {
    std::string args, flag, range;
  };
  const std::string tune = "tune --preset kernelbench-31 --db /nonexistent-dir/never.db ";
  const std::string timeout_range = "must be a number of seconds > 0 and <= 86400";
  const Case cases[] = {
      {tune + "--timeout 0", "--timeout", timeout_range},
      {tune + "--timeout -5", "--timeout", timeout_range},
      {tune + "--timeout nan", "--timeout", timeout_range},
      {tune + "--timeout inf", "--timeout", timeout_range},
      {tune + "--timeout 1e9", "--timeout", timeout_range},
      {tune + "--timeout 10s", "--timeout", timeout_range},
      {tune + "--top-k -1", "--top-k", "must be an integer from 1 to 1000"},
      {tune + "--top-k 0", "--top-k", "must be an integer from 1 to 1000"},
      {tune + "--device -1", "--device", "must be an integer from 0 to 1023"},
      {tune + "--devices 0,0", "--devices", "must be 'all' or GPU ordinals from 0 to 1023 separated by commas, each once"},
      {tune + "--devices 0,", "--devices", "must be 'all' or GPU ordinals from 0 to 1023 separated by commas, each once"},
      {tune + "--devices 1024", "--devices", "must be 'all' or GPU ordinals from 0 to 1023 separated by commas, each once"},
      {tune + "--devices any", "--devices", "must be 'all' or GPU ordinals from 0 to 1023 separated by commas, each once"},
      {tune + "--budget 0", "--budget", "must be an integer from 1 to 1000000"},
      {tune + "--budget 1000001", "--budget", "must be an integer from 1 to 1000000"},
      {tune + "--budget 99999999999999999999999999999999", "--budget", "must be an integer from 1 to 1000000"},
      {tune + "--budget 2.5", "--budget", "must be an integer from 1 to 1000000"},
      {tune + "--jobs 0", "--jobs", "must be an integer from 1 to 1024"},
      {"compile --preset kernelbench-31 --jobs 0", "--jobs", "must be an integer from 1 to 1024"},
      {"compile --preset kernelbench-31 -j -1", "--jobs", "must be an integer from 1 to 1024"},
      {"smoke --db /nonexistent-dir/never.db --jobs 100000", "--jobs", "must be an integer from 1 to 1024"},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << c.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind("fusetune: " + c.flag + ": " + c.range + ", got '", 0), 0u) << c.args << ": " << r.err;
    EXPECT_LT(r.err.size(), 200u) << c.args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
  }
}

TEST(Cli, NumericFlagsInRangeAreTaken) {
  std::string why;
  if (fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "a GPU driver is present: tune would run";
  const fusetune::TempDir dir("ft-cli");
  auto r = run("tune --preset kernelbench-31 --timeout 0.5 --top-k 1 --device 0 --strategy random --budget 1000000 "
               "-j 2 --db " + (dir.path() / "t.db").string());
  EXPECT_EQ(r.code, 3) << "parsed, then stopped for want of a GPU: " << r.err;
}

TEST(Cli, ImportingADirectoryIsBadInput) {
  const fusetune::TempDir dir("ft-cli");
  auto r = run("db --db " + (dir.path() / "t.db").string() + " import " + dir.path().string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err, "fusetune: cannot read the dump " + dir.path().string() + ": it is a directory, not a file\n");
  r = run("db --db " + (dir.path() / "t.db").string() + " import " + (dir.path() / "missing.jsonl").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("missing.jsonl: no such file"), std::string::npos) << r.err;
}

// Root writes read-only files: a read-only file can only be shown to an unprivileged user.
// The prefix that runs the binary as one (nobody), "" when this test is not root, nullopt when
// there is no way.
std::optional<std::string> unprivileged() {
  if (geteuid() != 0) return "";
  const std::string prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups -- ";
  if (run("--version", prefix).code == 0) return prefix;
  return std::nullopt;
}

TEST(Cli, ImportIntoAReadOnlyDatabaseSaysSoAndBlamesNoLine) {
  const auto as_user = unprivileged();
  if (!as_user) GTEST_SKIP() << "running as root and setpriv cannot run the binary as nobody";
  const fusetune::TempDir dir("ft-cli");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);  // SQLite may make its -shm file
  const std::string db = (dir.path() / "t.db").string();
  const std::string dump = (dir.path() / "d.jsonl").string();
  { (void)fusetune::db::Database::open(db, fusetune::db::OpenOptions{.load_shipped = false}); }
  fusetune::db::testing::write_bytes(dump, "{\"fusetune_dump\":1,\"schema_version\":2}\n"
                                           "{\"table\":\"problems\",\"key\":\"k\",\"canonical\":\"c\"}\n");
  ASSERT_EQ(chmod(db.c_str(), 0444), 0);
  ASSERT_EQ(chmod(dump.c_str(), 0444), 0);
  auto r = run("db --db " + db + " import " + dump, *as_user);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("fusetune: cannot write the tuning database ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("t.db: attempt to write a readonly database"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("dump line"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".cpp:"), std::string::npos) << r.err;
}

bool has_terminal_controls(const std::string& s, bool allow_newline = true) {
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && !(allow_newline && b == '\n')) || b == 0x7f) return true;
  }
  return false;
}

// Database strings reach stdout quoted (CSV) or cleaned (tables): a comma or newline in a GPU
// name does not add a field or a record, an escape sequence never reaches the terminal.
TEST(Cli, QueryCsvIsQuotedAndTablesCarryNoControls) {
  const fusetune::TempDir dir("ft-cli");
  const std::string db = (dir.path() / "q.db").string();
  {
    auto d = fusetune::db::Database::open(db, fusetune::db::OpenOptions{.load_shipped = false});
    auto env = fusetune::db::testing::h200();
    env.gpu_name = "NVIDIA H200,\n\x1b]0;pwned\x07\"evil\"";
    d.write_winner(fusetune::db::testing::winner(env, "v1,\nforged,row\x1b[2J", 1.5));
    auto res = fusetune::db::testing::result("r1", 1.0);
    res.reason = "bad,\r\nreason \x1b[31mred";
    d.write_results(env, {res});
  }
  auto r = run("query --db " + db + " --csv");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has_terminal_controls(r.out)) << r.out;
  auto records = fusetune::testing::read_csv(r.out);
  ASSERT_EQ(records.size(), 2u) << r.out;
  ASSERT_EQ(records[1].size(), 17u) << r.out;
  EXPECT_EQ(records[1][3], "NVIDIA H200,\n?\"evil\"");
  EXPECT_EQ(records[1][7], "v1,\nforged,row?");

  // The old spelling, kept for scripts written before --csv.
  EXPECT_EQ(run("query --db " + db + " --format csv").out, r.out);

  r = run("query --all --db " + db + " --csv -");
  ASSERT_EQ(r.code, 0) << r.err;
  records = fusetune::testing::read_csv(r.out);
  ASSERT_EQ(records.size(), 2u) << r.out;
  ASSERT_EQ(records[1].size(), 14u) << r.out;
  EXPECT_EQ(records[1][6], "bad,\r\nreason ?red");

  r = run("query --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has_terminal_controls(r.out)) << r.out;
  EXPECT_EQ(lines(r.out), 5u) << "what every row shares, header, rule, one row, the problem line:\n" << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200,??\"evil\""), std::string::npos) << r.out;

  r = run("query --all --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has_terminal_controls(r.out)) << r.out;
  EXPECT_EQ(lines(r.out), 7u) << "problem, key, fixed parameters, header, rule, one row, the winner's line:\n"
                               << r.out;
  EXPECT_NE(r.out.find("the stored winner, v1,?forged,row?, has no result stored here"), std::string::npos) << r.out;
}

// A GPU name carrying a terminal escape and a newline: the record is not one fusetune writes, so
// export refuses it (src/trust/record_check.cpp), in one clean line that does not echo it.
TEST(Cli, ExportOfAGpuNameWithControlsIsRefusedInOneCleanLine) {
  const fusetune::TempDir dir("ft-cli");
  const std::string db = (dir.path() / "e.db").string();
  {
    auto d = fusetune::db::Database::open(db);  // with the shipped winners
    const auto p = fusetune::spec::parse(*fusetune::spec::preset_spec("kernelbench-31"));
    auto w = d.winners(fusetune::spec::problem_key(p), "", std::string("fp32")).at(0);
    w.env.gpu_name = "NVIDIA H200\x1b]0;pwned\x07\n";
    w.shipped = false;
    w.created_at = "2099-01-01T00:00:00.000Z";
    d.write_winner(w);
  }
  auto r = run("export --preset kernelbench-31 --math fp32 --format cu --db " + db + " -o " +
               (dir.path() / "out.cu").string());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(has_terminal_controls(r.err)) << r.err;
  EXPECT_NE(r.err.find("GPU name"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "out.cu"));
}

}  // namespace
