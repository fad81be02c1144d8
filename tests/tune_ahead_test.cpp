// cuDNN plans built ahead (fusetune::protocol::RunRequest::prebuild, tune/plan_prebuild.hpp), GPU-free: the guided
// search names the cuDNN graph configurations among its next predicted picks to the worker that
// runs the variant before them, so their runtime-compiled kernels build while the GPU is busy.
// Each is named to a worker once, never the variant the same request runs, and only cudnn-fused
// configurations are named. The exhaustive search builds every configuration when it lists them
// and names none.
// tests/fake_worker.cpp logs what it is asked to build (FUSETUNE_FAKE_AHEAD_LOG).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "spec/parser.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {
namespace {

// One line of the fake worker's log, in the order the worker saw them: a plan asked for ahead
// with the request for `run`, the run itself (`ahead` empty), or a re-timing request.
struct Asked {
  std::string kind;  // "run", "ahead" or "retime" (then `run` is "sustained" or "interleaved")
  int device = 0;
  std::string run, ahead;
  int turns = 0;                    // retime: how many of `plans`, first, take turns
  std::vector<std::string> plans;   // retime: the plans, in the request's order
};

class TuneAhead : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = (std::filesystem::path(::testing::TempDir()) / ("ahead." + std::to_string(getpid()) + ".log")).string();
    std::filesystem::remove(log_);
    ::setenv("FUSETUNE_FAKE_AHEAD_LOG", log_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("FUSETUNE_FAKE_AHEAD_LOG");
    std::filesystem::remove(log_);
  }
  std::vector<Asked> asked() const {
    std::vector<Asked> out;
    std::ifstream in(log_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      Asked a;
      ls >> a.kind >> a.device >> a.run;
      if (a.kind == "ahead") ls >> a.ahead;
      if (a.kind == "retime") {
        ls >> a.turns;
        for (std::string name; ls >> name;) a.plans.push_back(name);
      }
      out.push_back(a);
    }
    return out;
  }
  static TuneOptions options(const std::string& strategy) {
    TuneOptions o;
    o.worker_exe = FUSETUNE_FAKE_WORKER;
    o.retime_rounds = 3;
    o.strategy = parse_strategy(strategy);
    return o;
  }
  std::string log_;
};

// kernelbench-31's pattern on a small shape: cudnn-fused has two graphs (NCHW and NHWC input),
// each with the fake worker's two built configurations.
const char* kSpec = "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)";

TEST_F(TuneAhead, TheGuidedSearchNamesTheCudnnPlansOfItsNextPicks) {
  const TuneReport rep = run_tune(spec::parse(kSpec), options("model"));
  ASSERT_TRUE(rep.winner);
  const std::vector<Asked> log = asked();
  std::set<std::pair<int, std::string>> seen, ran;
  bool ran_after = false;  // a configuration the search ran after it had been asked for ahead
  for (const Asked& x : log) {
    if (x.kind == "retime") continue;
    if (x.ahead.empty()) {
      ran.insert({x.device, x.run});
      ran_after = ran_after || seen.count({x.device, x.run}) != 0;
      continue;
    }
    EXPECT_TRUE(x.ahead.starts_with("cudnn-fused.")) << x.ahead;
    EXPECT_NE(x.ahead.find(".eng"), std::string::npos) << x.ahead << ": a configuration, not a template";
    EXPECT_NE(x.ahead, x.run);
    EXPECT_EQ(ran.count({x.device, x.ahead}), 0u) << x.ahead << " asked for ahead after it ran";
    EXPECT_TRUE(seen.insert({x.device, x.ahead}).second) << x.ahead << " asked of GPU " << x.device << " twice";
  }
  ASSERT_FALSE(seen.empty()) << "no cuDNN plan was asked for ahead";
  EXPECT_TRUE(ran_after);
}

// A cold guided tune (solutions still compiling as it begins) confirms the baselines first: the
// worker's sustained re-timing comes before any solution runs and before any plan is asked for
// ahead, so it never waits for a plan being built (call 83: it started at the search's first wait
// for a compile, after two plans had been asked for, and waited 0.5 s for them).
TEST_F(TuneAhead, AColdGuidedTuneConfirmsTheBaselinesBeforeAnyPlanIsAskedFor) {
  TuneOptions o = options("model");
  o.jobs = 1;  // one compile thread: solutions are still compiling when the search begins
  const TuneReport rep = run_tune(spec::parse(kSpec), o);
  ASSERT_TRUE(rep.winner && rep.unfused && rep.cudnn);
  ASSERT_TRUE(std::any_of(rep.notes.begin(), rep.notes.end(), [](const std::string& n) {
    return n.starts_with("confirmation round of ") && n.find("run while the solutions compiled") != std::string::npos;
  })) << "the baselines were not confirmed while the solutions compiled";
  const std::vector<Asked> log = asked();
  const auto first = [&](auto pred) {
    return size_t(std::find_if(log.begin(), log.end(), pred) - log.begin());
  };
  const size_t retime = first([](const Asked& a) { return a.kind == "retime"; });
  const size_t ahead = first([](const Asked& a) { return !a.ahead.empty(); });
  const size_t solution = first([](const Asked& a) {
    return a.kind == "run" && !a.run.starts_with("unfused.") && !a.run.starts_with("cudnn.");
  });
  ASSERT_LT(retime, log.size()) << "no re-timing request";
  EXPECT_EQ(log[retime].run, "sustained");
  EXPECT_LT(retime, ahead);
  EXPECT_LT(retime, solution);
}

// The confirmation round: the winner and the runner-up take turns (their comparison is the tie
// rule's verdict: the same stretch of the GPU's clocks for both, sustain_round.hpp); `unfused`
// and the floor, confirmed early here, are not in it. The early round times each plan alone.
TEST_F(TuneAhead, TheWinnerAndTheRunnerUpTakeTurnsInTheConfirmationRound) {
  TuneOptions o = options("model");
  o.jobs = 1;
  const TuneReport rep = run_tune(spec::parse(kSpec), o);
  ASSERT_TRUE(rep.winner && rep.runner_up);
  std::vector<Asked> sustained;
  for (const Asked& a : asked())
    if (a.kind == "retime" && a.run == "sustained") sustained.push_back(a);
  ASSERT_EQ(sustained.size(), 2u) << "the early round and the confirmation round";
  EXPECT_EQ(sustained[0].turns, 0);
  const Asked& last = sustained.back();
  ASSERT_EQ(last.turns, 2);
  ASSERT_EQ(last.plans.size(), 2u);
  const std::set<std::string> pair{last.plans[0], last.plans[1]};
  const std::set<std::string> expected{rep.results[*rep.winner].variant.name, rep.results[*rep.runner_up].variant.name};
  EXPECT_EQ(pair, expected);
}

// A baseline in the pair: with every solution slow, `unfused` (confirmed early, while the
// solutions compiled) is the winner or the runner-up, and is timed again in turns with the other.
TEST_F(TuneAhead, ABaselineOfThePairConfirmedEarlyTakesTurnsToo) {
  ::setenv("FUSETUNE_FAKE_SOLUTION_MS", "5", 1);
  TuneOptions o = options("model");
  o.jobs = 1;
  const TuneReport rep = run_tune(spec::parse(kSpec), o);
  ::unsetenv("FUSETUNE_FAKE_SOLUTION_MS");
  ASSERT_TRUE(rep.winner && rep.runner_up && rep.unfused);
  const std::string unfused = rep.results[*rep.unfused].variant.name;
  const std::set<std::string> expected{rep.results[*rep.winner].variant.name, rep.results[*rep.runner_up].variant.name};
  ASSERT_EQ(expected.count(unfused), 1u) << "unfused is neither winner nor runner-up";
  std::vector<Asked> sustained;
  for (const Asked& a : asked())
    if (a.kind == "retime" && a.run == "sustained") sustained.push_back(a);
  ASSERT_EQ(sustained.size(), 2u);
  EXPECT_NE(std::find(sustained[0].plans.begin(), sustained[0].plans.end(), unfused), sustained[0].plans.end())
      << "unfused was not confirmed early";
  const Asked& last = sustained.back();
  ASSERT_EQ(last.turns, 2);
  ASSERT_GE(last.plans.size(), 2u);
  EXPECT_EQ((std::set<std::string>{last.plans[0], last.plans[1]}), expected);
}

TEST_F(TuneAhead, TheExhaustiveSearchNamesNone) {
  const TuneReport rep = run_tune(spec::parse(kSpec), options("exhaustive"));
  ASSERT_TRUE(rep.winner);
  for (const Asked& x : asked()) EXPECT_TRUE(x.ahead.empty()) << x.ahead;
}

}  // namespace
}  // namespace fusetune::tune
