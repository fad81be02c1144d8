// `fusetune completion bash`: the script parses in bash and completes what a user types, from the
// live command tree (a new option shows up without editing the script). Runs bash; GPU-free.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cli_run.hpp"

namespace {

using fusetune::testing::read_pipe;
using fusetune::testing::run;

class Completion : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = run("completion bash");
    ASSERT_EQ(r.code, 0) << r.err;
    script_ = ::testing::TempDir() + "fusetune-completion-" + std::to_string(getpid()) + ".bash";
    std::ofstream(script_) << r.out;
  }
  void TearDown() override { std::remove(script_.c_str()); }

  // What bash offers after the words typed so far (the last one being completed), sorted.
  std::string complete(const std::string& words) const {
    const std::string cmd = "bash -c 'source " + script_ + "; COMP_WORDS=(" + words +
                            "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _fusetune; "
                            "for x in \"${COMPREPLY[@]}\"; do echo \"$x\"; done | sort | tr \"\\n\" \" \"'";
    std::string out;
    EXPECT_EQ(read_pipe(cmd, out), 0) << cmd;
    return out;
  }

  std::string script_;
};

TEST_F(Completion, TheScriptParses) {
  std::string out;
  EXPECT_EQ(read_pipe("bash -n " + script_ + " 2>&1", out), 0) << out;
  EXPECT_EQ(out, "");
}

TEST_F(Completion, CompletesCommandsAndNestedCommands) {
  EXPECT_EQ(complete("fusetune tu"), "tune ");
  EXPECT_EQ(complete("fusetune re"), "report ");
  EXPECT_EQ(complete("fusetune db d"), "dump ");
  EXPECT_EQ(complete("fusetune db im"), "import ");
}

TEST_F(Completion, CompletesEachCommandsOwnOptions) {
  EXPECT_EQ(complete("fusetune tune --ma"), "--math ");
  EXPECT_EQ(complete("fusetune tune --fo"), "--force ");
  EXPECT_EQ(complete("fusetune db dump --o"), "--output ");
  // query's --format is kept for old scripts but hidden: not offered.
  EXPECT_EQ(complete("fusetune query --f"), "");
  EXPECT_EQ(complete("fusetune export --fo"), "--format ");
}

TEST_F(Completion, CompletesValuesFromTheOptionsOwnChoices) {
  EXPECT_EQ(complete("fusetune tune --math \"\""), "fp32 tf32 ");
  EXPECT_EQ(complete("fusetune tune --preset k"), "kernelbench-31 kernelbench-32 ");
  EXPECT_EQ(complete("fusetune export --format \"\""), "cu cubin kernelbench ptx torch torch-patch ");
  EXPECT_EQ(complete("fusetune smoke --checks \"\""), "compile database exports gpu-tiny winners ");
  EXPECT_EQ(complete("fusetune completion b"), "bash ");
  // A number: nothing to offer, and no option names either.
  EXPECT_EQ(complete("fusetune tune --budget \"\""), "");
}

TEST_F(Completion, CompletesFileNamesForPaths) {
  const std::string dir = ::testing::TempDir() + "compl-" + std::to_string(getpid());
  std::string out;
  ASSERT_EQ(read_pipe("mkdir -p " + dir + " && touch " + dir + "/tuning.db", out), 0);
  EXPECT_EQ(complete("fusetune query --db " + dir + "/tun"), dir + "/tuning.db ");
  EXPECT_EQ(complete("fusetune tune --json " + dir + "/tun"), dir + "/tuning.db ");
  // A positional file argument, and options still offered after the command.
  EXPECT_EQ(complete("fusetune db import " + dir + "/tun"), dir + "/tuning.db ");
  EXPECT_EQ(complete("fusetune db import --tr"), "--trust ");
  (void)read_pipe("rm -rf " + dir, out);
}

TEST(CompletionCli, RefusesAnotherShell) {
  const auto r = run("completion zsh");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("zsh"), std::string::npos) << r.err;
}

}  // namespace
