// cuDNN plans built ahead (RunRequest::prebuild, tune/plan_prebuild.hpp), GPU-free: the guided
// search names the cuDNN graph configurations it ranks next to the worker that runs the variant
// before them, so their runtime-compiled kernels build while the GPU is busy. Each is named to a
// worker once, never the variant the same request runs, and only cudnn-fused configurations
// are named. The exhaustive search builds every configuration when it lists them and names none.
// tests/fake_worker.cpp logs what it is asked to build (FUSETUNE_FAKE_AHEAD_LOG).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

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

struct Asked {
  int device = 0;
  std::string run, ahead;
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
      ls >> a.device >> a.run >> a.ahead;
      out.push_back(a);
    }
    return out;
  }
  static TuneOptions options(const std::string& strategy) {
    TuneOptions o;
    o.worker_exe = FUSETUNE_FAKE_WORKER;
    o.retime_rounds = 3;
    o.strategy = strategy;
    return o;
  }
  std::string log_;
};

// kernelbench-31's pattern on a small shape: cudnn-fused has two graphs (NCHW and NHWC input),
// each with the fake worker's two built configurations.
const char* kSpec = "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)";

TEST_F(TuneAhead, TheGuidedSearchNamesTheCudnnPlansItRanksNext) {
  const TuneReport rep = run_tune(spec::parse(kSpec), options("model"));
  ASSERT_TRUE(rep.winner);
  const std::vector<Asked> a = asked();
  ASSERT_FALSE(a.empty()) << "no cuDNN plan was asked for ahead";
  std::set<std::pair<int, std::string>> seen;
  for (const Asked& x : a) {
    EXPECT_TRUE(x.ahead.starts_with("cudnn-fused.")) << x.ahead;
    EXPECT_NE(x.ahead.find(".eng"), std::string::npos) << x.ahead << ": a configuration, not a template";
    EXPECT_NE(x.ahead, x.run);
    EXPECT_TRUE(seen.insert({x.device, x.ahead}).second) << x.ahead << " asked of GPU " << x.device << " twice";
  }
  // At least one configuration the search went on to run was asked for before it ran.
  bool ran_after = false;
  for (const auto& r : rep.results)
    for (const Asked& x : a) ran_after = ran_after || (r.variant.name == x.ahead && r.timed);
  EXPECT_TRUE(ran_after);
}

TEST_F(TuneAhead, TheExhaustiveSearchNamesNone) {
  const TuneReport rep = run_tune(spec::parse(kSpec), options("exhaustive"));
  ASSERT_TRUE(rep.winner);
  EXPECT_TRUE(asked().empty());
}

}  // namespace
}  // namespace fusetune::tune
