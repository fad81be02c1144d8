// `tune`'s table, read as a person reads it (issue: 116-230 rows, 240 columns, the winner scrolled
// off): at most 25 lines and 120 columns with the winner in view, floors labelled and never shown
// with a speedup, layouts by name, parameters that never change printed once, every variant and
// every reason with --all. GPU-free: the report is built by hand.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/tune_table.hpp"

namespace fusetune::cli {
namespace {

using fusetune::protocol::Status;
using tune::TuneReport;
using fusetune::protocol::VariantResult;

fusetune::protocol::VariantResult result(codegen::Candidate c, const std::string& name, double ms,
                     std::vector<std::pair<std::string, int64_t>> params, fusetune::protocol::Status status = fusetune::protocol::Status::ok) {
  fusetune::protocol::VariantResult r;
  r.variant.candidate = c;
  r.variant.name = name;
  r.variant.design = name.substr(0, name.rfind('.'));
  r.variant.params = std::move(params);
  r.status = status;
  r.verified = status == fusetune::protocol::Status::ok;
  r.timed = status == fusetune::protocol::Status::ok;
  r.time.median_ms = ms;
  r.time.spread = 0.005;
  r.time.round = fusetune::protocol::TimeRound::first_pass;
  if (status != fusetune::protocol::Status::ok) r.reason = "cuDNN eng7_k24=29: draw 0: 3983014 of 4129024 elements outside the TF32 bound";
  return r;
}

// A report shaped like a real one: 2 floors, 2 baselines, 60 solutions, failures, notes.
TuneReport report() {
  TuneReport rep;
  rep.problem =
      "conv2d(n=128,c=64,h=128,w=128,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw) | min(0.5) "
      "| add(param[k]) | mul(2)";
  rep.device = {{"name", "NVIDIA H200"}};
  rep.copy_gbps = 4250;
  using C = codegen::Candidate;
  rep.results.push_back(result(C::cudnn, "cudnn.nchw", 1.9, {{"layout", 0}}));
  rep.results.push_back(result(C::cudnn, "cudnn.nhwc", 0.9, {{"layout", 1}}));
  rep.results.push_back(result(C::unfused, "unfused.nchw", 4.2, {{"layout", 0}, {"unfused_block", 256}}));
  rep.results.push_back(
      result(C::unfused, "unfused.nhwc-conv", 3.6, {{"layout", 0}, {"unfused_block", 256}, {"conv_layout", 1}}));
  for (int i = 0; i < 60; ++i)
    // As many fixed parameters as kernelbench-32's table on the H200 had (two lines of them).
    rep.results.push_back(result(C::epilogue, "epilogue.nhwc.t" + std::to_string(i), 1.7 + 0.01 * i,
                                 {{"tile", 32 * (i % 4 + 1)}, {"vec", 4}, {"block", 256}, {"conv_layout", 1},
                                  {"cpt", 1}, {"lanes", 8}, {"stage_chan", 1}, {"tr_block", 256}, {"tr_ovec", 4},
                                  {"tr_tile", 64}, {"tr_vec", 4}, {"unfused_block", 256}}));
  rep.results.push_back(result(C::cudnn_fused, "cudnn-fused.x-nhwc.eng7.k12_29", 0, {{"graph_in", 1}, {"eng", 7}},
                               fusetune::protocol::Status::wrong_result));
  rep.results.push_back(result(C::cudnn_fused, "cudnn-fused.x-nchw.eng9", 0, {{"graph_in", 0}, {"eng", 9}},
                               fusetune::protocol::Status::not_supported));
  rep.winner = 5;  // epilogue.nhwc.t1, 1.71 ms
  rep.results[5].time.round = fusetune::protocol::TimeRound::confirmation;
  rep.unfused = 3;
  rep.cudnn = 1;
  for (int i = 0; i < 5; ++i) rep.notes.push_back("cuDNN NCHW conv FFT (tf32) rejected: draw 0: ...");
  rep.phase_seconds = {{"device", 0.0}, {"generate", 0.0}, {"compile", 5.7}, {"baselines", 10.6},
                       {"engines", 12.3}, {"measure", 27.2}, {"finalists", 1.2}, {"confirm", 0.4}};
  return rep;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(TuneTable, FitsAScreenWithTheWinnerInView) {
  const std::string t = tune_table(report());
  const auto lines = split(t);
  EXPECT_LE(lines.size(), 24u) << t;  // and `database PATH` after it: 25
  for (const auto& l : lines) EXPECT_LE(l.size(), 120u) << l;
  EXPECT_EQ(lines.back().rfind("winner   epilogue.nhwc.t1  1.710 ms (confirmed)  2.11x vs unfused 3.600 ms", 0),
            0u)
      << t;
  // The winner's row is marked, and leads the solutions.
  size_t winner_row = 0, first_solution = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("*  epilogue.nhwc.t1 ", 0) == 0) winner_row = i;
    if (first_solution == 0 && lines[i].find("epilogue.nhwc.t") != std::string::npos) first_solution = i;
  }
  EXPECT_GT(winner_row, 0u) << t;
  EXPECT_EQ(winner_row, first_solution) << t;
  // Ten solutions and the four reference rows, no more.
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) { return l.find("epilogue.nhwc.t") != std::string::npos &&
                                                            l.rfind("winner", 0) != 0; }),
            10);
  for (const char* part : {"50 more verified", "; 1 not_supported, 1 wrong_result;", "5 notes",
                           "(--all shows them)"})
    EXPECT_NE(t.find(part), std::string::npos) << part << "\n" << t;
}

TEST(TuneTable, FloorsAreLabelledAndShowNoSpeedup) {
  for (const auto& l : split(tune_table(report()))) {
    if (l.find("(floor)") == std::string::npos && l.find("(baseline)") == std::string::npos) continue;
    EXPECT_EQ(l.find('x', l.find("conf") == std::string::npos ? l.find("1st") : l.find("conf")), std::string::npos)
        << "a reference row shows a speedup: " << l;
  }
}

TEST(TuneTable, FixedParametersOnceLayoutsByNameNearWinnerMarked) {
  const std::string t = tune_table(report());
  EXPECT_NE(t.find("fixed    block=256 conv_layout=nhwc cpt=1 lanes=8"), std::string::npos) << t;
  EXPECT_NE(t.find("layout=nchw"), std::string::npos) << t;
  EXPECT_EQ(t.find("layout=1"), std::string::npos) << t;
  // 1.70 and 1.72 ms are within 1% of the winner's 1.71: marked '~'.
  EXPECT_NE(t.find("~  epilogue.nhwc.t0 "), std::string::npos) << t;
  EXPECT_NE(t.find("~  epilogue.nhwc.t2 "), std::string::npos) << t;
  EXPECT_NE(t.find("   epilogue.nhwc.t3 "), std::string::npos) << t;
  EXPECT_EQ(param_display("graph_in", 0), "x=nchw");
  EXPECT_EQ(param_display("out_nhwc", 1), "out=nhwc");
  EXPECT_EQ(param_display("bm", 128), "bm=128");
}

TEST(TuneTable, ATieIsSaidAboveTheWinnersLineAndTheTableStillFits) {
  // epilogue.nhwc.t0 (1.70 ms) and t1 (1.71 ms) are 0.6% apart, within the 1% noise: the tuner
  // gave the win to t1 on the secondary key (tie_break.hpp). One row fewer makes room for it.
  TuneReport rep = report();
  rep.runner_up = 4;
  rep.tie = tune::decide_tie(rep.results[4], rep.results[5]);
  rep.tie.by = "registers";
  ASSERT_TRUE(rep.tie.tie);
  const std::string t = tune_table(rep);
  const auto lines = split(t);
  EXPECT_LE(lines.size(), 24u) << t;
  for (const auto& l : lines) EXPECT_LE(l.size(), 120u) << l;
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.back().rfind("winner   epilogue.nhwc.t1  1.710 ms", 0), 0u) << t;
  EXPECT_EQ(lines[lines.size() - 2],
            "tie      with epilogue.nhwc.t0 (1.700 ms, 0.6% apart within 1.0% noise): the one with fewer registers wins")
      << t;
  EXPECT_NE(t.find("51 more verified"), std::string::npos) << t;
}

TEST(TuneTable, AllShowsEveryVariantEveryReasonAndEveryNote) {
  TuneTableOptions o;
  o.all = true;
  const std::string t = tune_table(report(), o);
  for (const auto& r : report().results) EXPECT_NE(t.find(r.variant.name), std::string::npos) << r.variant.name;
  EXPECT_NE(t.find("cudnn-fused.x-nhwc.eng7.k12_29: wrong_result: cuDNN eng7_k24=29: draw 0: 3983014 of 4129024"),
            std::string::npos)
      << t;
  size_t notes = 0;
  for (const auto& l : split(t)) notes += l.rfind("note: ", 0) == 0;
  EXPECT_EQ(notes, 5u);
  for (const auto& l : split(t)) EXPECT_LE(l.size(), 120u) << l;
}

}  // namespace
}  // namespace fusetune::cli

