// FUSETUNE_TRACE, GPU-free (tests/fake_worker.cpp stands in for the GPU): a tune appends its
// timeline to the named file, one line per event in time order, with every phase and what the
// tuner waited for inside them, the worker's setup placed on that timeline; without a path no
// file is written; a file that cannot be opened costs the tune nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "spec/parser.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {
namespace {

const char* kSpec = "conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | relu";

TuneOptions options() {
  TuneOptions o;
  o.worker_exe = FUSETUNE_FAKE_WORKER;
  o.max_variants = 4;
  o.retime_rounds = 3;
  o.strategy = Strategy::model;
  return o;
}

std::filesystem::path temp(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / (name + "." + std::to_string(getpid()));
}

// Removes the file when the test ends, however it ends.
struct RemoveAtEnd {
  std::filesystem::path path;
  ~RemoveAtEnd() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TEST(TuneTrace, ATuneWritesItsTimelineInOrder) {
  const auto path = temp("trace.txt");
  std::filesystem::remove(path);
  const RemoveAtEnd cleanup{path};
  TuneOptions o = options();
  o.trace_path = path.string();
  const TuneReport rep = run_tune(spec::parse(kSpec), o);
  ASSERT_TRUE(rep.winner);
  std::ifstream in(path);
  std::vector<double> t;
  std::string text, line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    double s = -1;
    ls >> s;
    t.push_back(s);
    text += line + "\n";
  }
  ASSERT_GT(t.size(), 10u) << text;
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LE(t[i - 1], t[i]) << text;
  for (const char* phase : {"device", "generate", "compile", "baselines", "measure", "finalists", "confirm"}) {
    EXPECT_NE(text.find(std::string("phase ") + phase + " begins"), std::string::npos) << phase << "\n" << text;
    EXPECT_NE(text.find(std::string("phase ") + phase + " ends"), std::string::npos) << phase << "\n" << text;
  }
  EXPECT_NE(text.find("setup asked of GPU 0's worker"), std::string::npos) << text;
  EXPECT_NE(text.find("lane 0's setup in"), std::string::npos) << text;
  EXPECT_NE(text.substr(0, text.find('\n')).find(" tune of conv2d("), std::string::npos) << text;
  // The worker's start of its setup, on the tune's timeline: after the tune began, before the
  // answer came in.
  const std::string said = "lane 0's setup in: the worker began it at ";
  const size_t at = text.find(said);
  ASSERT_NE(at, std::string::npos) << text;
  const double begun = std::stod(text.substr(at + said.size()));
  const size_t line_start = text.rfind('\n', at) + 1;
  EXPECT_GE(begun, 0.0) << text;
  EXPECT_LE(begun, std::stod(text.substr(line_start))) << text;
  EXPECT_NE(text.find("lane 0 runs unfused"), std::string::npos) << text;
  EXPECT_NE(text.find("lane 0 answered for"), std::string::npos) << text;
  EXPECT_NE(text.find("re-timing"), std::string::npos) << text;
  // Each background compile with its duration: whether the pool was compiling what the search
  // then waited for is read off these lines.
  EXPECT_TRUE(std::regex_search(text, std::regex(R"( compiled [a-z-]+\.\S+ \(\d+ ms\))"))) << text;
  // Appended: a second tune adds its own timeline after the first.
  const size_t lines = t.size();
  (void)run_tune(spec::parse(kSpec), o);
  std::ifstream again(path);
  size_t n = 0;
  while (std::getline(again, line)) ++n;
  EXPECT_GT(n, lines);
}

// Run from an empty directory: a tune without a trace path (what `tune` passes when
// FUSETUNE_TRACE is unset) leaves it empty, so no default trace file appears anywhere relative.
TEST(TuneTrace, WithoutAPathNoFileIsWritten) {
  const auto dir = temp("trace-dir");
  std::filesystem::create_directories(dir);
  const RemoveAtEnd cleanup{dir};
  struct Cwd {  // restored however the test ends, before the directory goes
    std::filesystem::path before = std::filesystem::current_path();
    ~Cwd() { std::filesystem::current_path(before); }
  };
  TuneReport rep;
  {
    const Cwd cwd;
    std::filesystem::current_path(dir);
    rep = run_tune(spec::parse(kSpec), options());
  }
  EXPECT_TRUE(rep.winner);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

TEST(TuneTrace, AnUnwritableTraceCostsTheTuneNothing) {
  TuneOptions o = options();
  o.trace_path = (temp("no-such-dir") / "trace.txt").string();
  const TuneReport rep = run_tune(spec::parse(kSpec), o);
  EXPECT_TRUE(rep.winner);
  EXPECT_FALSE(std::filesystem::exists(o.trace_path));
}

}  // namespace
}  // namespace fusetune::tune
