// The tuner's phases, GPU-free, against a fake worker (tests/fake_worker.cpp) with synthetic,
// deterministic times: finalists per design, the winner from re-timed runs, its figures from
// the confirmation round, failures recorded and survived.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "spec/parser.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {
namespace {

using codegen::Role;

TuneReport fake_tune(const std::string& spec, const std::string& plant, std::vector<size_t>* batched = nullptr) {
  TuneOptions o;
  o.worker_exe = FUSETUNE_FAKE_WORKER;
  o.max_variants = 4;
  o.plant = plant;
  o.retime_rounds = 5;
  if (batched)
    o.on_batch = [batched](const TuneReport&, const std::vector<size_t>& b) {
      batched->insert(batched->end(), b.begin(), b.end());
    };
  return run_tune(spec::parse(spec), o);
}

const char* kSpec = "conv2d(n=2,c=8,h=16,w=16,k=16,r=3) | min(0.5) | add(param[k]) | mul(2)";

TEST(TunePhases, RunInOrderAndRecordTheirTimes) {
  const auto rep = fake_tune(kSpec, "");
  std::vector<std::string> names;
  for (const auto& [p, s] : rep.phase_seconds) {
    names.push_back(p);
    EXPECT_GE(s, 0.0);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"device", "generate", "compile", "baselines", "measure", "finalists",
                                             "confirm"}));
  EXPECT_EQ(rep.device.value("name", ""), "Fake H200");
  EXPECT_DOUBLE_EQ(rep.copy_gbps, 4000);
}

TEST(TunePhases, WinnerIsTheFastestPipelineAndItsFiguresComeFromTheConfirmationRound) {
  std::vector<size_t> batched;
  const auto rep = fake_tune(kSpec, "", &batched);
  ASSERT_TRUE(rep.winner && rep.unfused && rep.cudnn && rep.runner_up);
  // The synthetic times are exact: the winner must be the fastest complete pipeline of all.
  double best = 1e9;
  for (const auto& r : rep.results)
    if (r.verified && r.variant.role() != Role::floor) best = std::min(best, r.time.median_ms);
  const auto& w = rep.results[*rep.winner];
  EXPECT_DOUBLE_EQ(w.time.median_ms, best);
  EXPECT_EQ(w.time.round, TimeRound::confirmation);
  EXPECT_EQ(w.time.samples.size(), 5u);
  EXPECT_EQ(rep.confirm_rounds, 5);
  EXPECT_EQ(rep.results[*rep.unfused].time.round, TimeRound::confirmation);
  EXPECT_EQ(rep.results[*rep.runner_up].time.round, TimeRound::confirmation);
  // Eager's faster conv path is the baseline: the NHWC conv (0.5 ms here) beats the NCHW one.
  EXPECT_EQ(rep.results[*rep.unfused].variant.name, "unfused.nhwc-conv");
  // Every result reached the database callback.
  std::set<size_t> seen(batched.begin(), batched.end());
  EXPECT_EQ(seen.size(), rep.results.size());
}

TEST(TunePhases, FinalistsAreTheBestOfEachDesign) {
  const auto rep = fake_tune(kSpec, "");
  std::map<std::string, std::vector<const VariantResult*>> by_design;
  for (const auto& r : rep.results)
    if (r.variant.role() == Role::solution) by_design[r.variant.design].push_back(&r);
  ASSERT_GE(by_design.size(), 2u);
  for (auto& [design, rs] : by_design) {
    std::vector<const VariantResult*> retimed;
    for (const auto* r : rs)
      if (r->time.round != TimeRound::first_pass) retimed.push_back(r);
    EXPECT_EQ(retimed.size(), std::min<size_t>(2, rs.size())) << design;
    // Nothing left in the first pass was faster than a finalist of its design.
    for (const auto* r : rs) {
      if (r->time.round != TimeRound::first_pass) continue;
      for (const auto* f : retimed) EXPECT_GE(r->time.kernel_median_ms, f->time.kernel_median_ms) << r->variant.name;
    }
  }
}

TEST(TunePhases, WrongAndFaultingVariantsAreRecordedAndTheRunGoesOn) {
  const auto rep = fake_tune(kSpec, "wrong,fault");
  bool wrong = false, fault = false;
  for (const auto& r : rep.results) {
    if (r.variant.name.find("planted-wrong") != std::string::npos) {
      wrong = true;
      EXPECT_EQ(r.status, Status::wrong_result);
      EXPECT_TRUE(std::isinf(r.error.max_abs));  // infinite figures cross the protocol intact
      EXPECT_TRUE(std::isnan(r.error.rel_l2));
    } else if (r.variant.name.find("planted-fault") != std::string::npos) {
      fault = true;
      EXPECT_EQ(r.status, Status::faulted);
      EXPECT_NE(r.reason.find("ILLEGAL_ADDRESS"), std::string::npos) << r.reason;
    } else {
      EXPECT_EQ(r.status, Status::ok) << r.variant.name << ": " << r.reason;
    }
  }
  EXPECT_TRUE(wrong);
  EXPECT_TRUE(fault);
  EXPECT_GE(rep.worker_restarts, 1);
  ASSERT_TRUE(rep.winner.has_value());
  EXPECT_EQ(rep.results[*rep.winner].variant.name.find("planted"), std::string::npos);
}

// The cuDNN algorithms a run used are reported (and stored with the winner); given ones are
// used instead of a search, as smoke does for a stored winner.
TEST(TunePhases, ConvChoicesAreReportedAndCanBePinned) {
  const auto found = fake_tune(kSpec, "");
  ASSERT_EQ(found.conv_choices.count(0), 1u);
  EXPECT_EQ(found.conv_choices.at(0).label, "FAKE_ALGO (tf32)");
  TuneOptions o;
  o.worker_exe = FUSETUNE_FAKE_WORKER;
  o.max_variants = 2;
  o.conv_choices[1] = ConvChoice{6, 1, 0.2f, "PINNED (tf32)"};
  const auto pinned = run_tune(spec::parse(kSpec), o);
  ASSERT_EQ(pinned.conv_choices.count(1), 1u);
  EXPECT_EQ(pinned.conv_choices.at(1).label, "PINNED (tf32)");
  EXPECT_EQ(pinned.conv_choices.count(0), 0u);
}

TEST(TunePhases, FloorsCanBeLeftOut) {
  TuneOptions o;
  o.worker_exe = FUSETUNE_FAKE_WORKER;
  o.max_variants = 2;
  o.floors = false;
  const auto rep = run_tune(spec::parse(kSpec), o);
  for (const auto& r : rep.results) EXPECT_NE(r.variant.role(), Role::floor) << r.variant.name;
  EXPECT_FALSE(rep.cudnn.has_value());
  EXPECT_TRUE(rep.winner.has_value());
}

}  // namespace
}  // namespace fusetune::tune
