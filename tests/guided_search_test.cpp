// `tune --strategy model` GPU-free: the guided search (tune/guided_search.hpp) replayed on the
// landscapes of every H200 tune recorded in docs/runs/'s archives (tests/data/recorded_tunes.txt
// lists them; each variant's recorded median stands
// in for measuring it), with the priors the tuner would give it (tune/cost_model.hpp, from the
// regenerated variants; registers unknown, as in the tuner, which searches while they compile). Its best must be within 2% of the recorded
// exhaustive best on every landscape, and on the large ones (>= 100 solution variants: the
// presets and bench/problems.txt) it must measure at most 30% of the space. Plus the search's
// own rules on small hand-made landscapes: every design probed, failures survived, determinism.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "common/temp_dir.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "tune/cost_model.hpp"
#include "tune/guided_search.hpp"

namespace fusetune::tune {
namespace {

namespace fs = std::filesystem;

// The recorded tunes, listed in tests/data/recorded_tunes.txt as ARCHIVE.tar.xz:member (the run
// records are archives, docs/runs/README.md): each archive's members extracted once, with tar,
// into a directory of this test's own, then read from there. Returns (citation, report) pairs in
// the manifest's order.
std::vector<std::pair<std::string, nlohmann::json>> recorded_reports() {
  const fs::path src(FUSETUNE_SOURCE_DIR);
  std::ifstream manifest(src / "tests" / "data" / "recorded_tunes.txt");
  std::map<std::string, std::vector<std::string>> by_archive;
  std::vector<std::pair<std::string, std::string>> order;
  for (std::string line; std::getline(manifest, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t colon = line.find(':');
    by_archive[line.substr(0, colon)].push_back(line.substr(colon + 1));
    order.emplace_back(line.substr(0, colon), line.substr(colon + 1));
  }
  const TempDir dir("fusetune-recorded-tunes");
  for (const auto& [archive, members] : by_archive) {
    const fs::path to = dir.path() / archive;
    fs::create_directories(to);
    std::string cmd = "tar -xJf '" + (src / archive).string() + "' -C '" + to.string() + "'";
    for (const auto& m : members) cmd += " '" + m + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (const auto& [archive, member] : order) {
    std::ifstream in(dir.path() / archive / member);
    out.emplace_back(archive + ":" + member, nlohmann::json::parse(in));
  }
  return out;
}

struct Landscape {
  std::string file;
  std::vector<SearchItem> items;
  std::vector<std::optional<double>> time;  // the recorded median of a verified variant
};

std::vector<Landscape> load_recorded() {
  std::vector<Landscape> out;
  const gpu::DeviceLimits dev = *gpu::limits_for_arch("sm_90");
  for (const auto& [citation, j] : recorded_reports()) {
    Landscape l;
    l.file = citation;
    const spec::Problem problem = spec::parse(j.at("problem").get<std::string>());
    std::map<std::string, codegen::Variant> generated;
    for (auto& v : codegen::generate_variants(problem, dev)) generated.emplace(v.name, std::move(v));
    CostInputs in;
    in.dev = dev;
    in.copy_gbps = j.value("copy_gbps", 0.0);
    in.tensor_tflops = j.value("math", "tf32") == "fp32" ? 51 : 495;
    for (const auto& r : j.at("results")) {
      if (r.value("role", "") != "solution") continue;
      const std::string status = r.value("status", "");
      SearchItem it;
      it.name = r.at("name").get<std::string>();
      it.design = r.value("design", "");
      for (const auto& [k, v] : r.at("params").items())
        if (v.is_number_integer()) it.params.emplace_back(k, v.get<int64_t>());
      std::sort(it.params.begin(), it.params.end());
      // A variant that did not compile (or fit the device) is a failure the search finds when it
      // picks it, at no GPU time.
      if (auto g = generated.find(it.name); g != generated.end()) it.prior_ms = prior_ms(problem, g->second, -1, in);
      l.items.push_back(std::move(it));
      const bool timed = status == "ok" && r.value("verified", false) && r.contains("time_ms") &&
                         r.at("time_ms").is_object() && r.at("time_ms").value("median", 0.0) > 0;
      l.time.push_back(timed ? std::optional<double>(r.at("time_ms").at("median").get<double>()) : std::nullopt);
    }
    if (!l.items.empty()) out.push_back(std::move(l));
  }
  return out;
}

// Loaded once per test binary: every test replays the same landscapes.
const std::vector<Landscape>& recorded() {
  static const std::vector<Landscape> all = load_recorded();
  return all;
}

struct Replay {
  double best = 0, exhaustive = 0;
  size_t measured = 0, size = 0;
};

Replay replay(const Landscape& l, GuidedOptions o = {}) {
  GuidedSearch s(l.items, o);
  while (auto i = s.next()) s.record(*i, l.time[*i]);
  Replay r;
  r.best = s.best_ms();
  r.measured = s.measured();
  r.size = l.items.size();
  for (const auto& t : l.time)
    if (t && (r.exhaustive == 0 || *t < r.exhaustive)) r.exhaustive = *t;
  return r;
}

TEST(GuidedSearch, MatchesExhaustiveOnEveryRecordedH200Tune) {
  const auto& all = recorded();
  ASSERT_GE(all.size(), 40u) << "the recorded tunes under docs/runs/";
  double worst = 0, worst_frac_large = 0, sum_frac = 0;
  for (const auto& l : all) {
    const Replay r = replay(l);
    ASSERT_GT(r.exhaustive, 0) << l.file;
    const double loss = r.best / r.exhaustive - 1;
    const double frac = double(r.measured) / double(r.size);
    std::printf("  %-78s %4zu/%4zu measured (%4.1f%%), best %+5.2f%%\n", l.file.c_str(), r.measured, r.size,
                100 * frac, 100 * loss);
    EXPECT_LE(loss, 0.02) << l.file << ": guided best " << r.best << " ms against " << r.exhaustive;
    if (r.size >= 100) {
      EXPECT_LE(frac, 0.30) << l.file;
      worst_frac_large = std::max(worst_frac_large, frac);
    }
    worst = std::max(worst, loss);
    sum_frac += frac;
  }
  std::printf("[ guided ] %zu landscapes: worst best %+.2f%% of exhaustive, largest share measured (>= 100 variants) "
              "%.1f%%, mean share %.1f%%\n",
              all.size(), 100 * worst, 100 * worst_frac_large, 100 * sum_frac / double(all.size()));
}

// `tune --devices`: one pick per GPU out at a time, answers recorded in the order of the picks
// (search/guided.cpp, GuidedSearcher::measure). A started item is never offered again, by next() or ranking().
// A pick still out counts in its design's model as measured at the model's estimate (fit()):
// without that, the picks made while answers were out followed the same optimism, and over the
// 114 recorded tunes the search measured 2770 (2 picks out) and 3361 (4) variants against 2393
// with one pick, up to 44% of a large space, its best 2.8% behind exhaustive's on one of them.
// With it: 2444 and 2610, at most 28.8% and 31.1% of a space of 100 or more, every best within
// 2% (worst +1.46% and +1.69%).
TEST(GuidedSearch, WithSeveralPicksOutItStaysNearExhaustive) {
  const auto& all = recorded();
  ASSERT_FALSE(all.empty());
  for (size_t width : {2, 4}) {
    size_t measured = 0, measured_one = 0, within = 0;
    double worst = 0, worst_share = 0;
    for (const auto& l : all) {
      GuidedSearch s(l.items);
      std::deque<size_t> out;
      std::set<size_t> offered;
      double best = 0;
      for (;;) {
        while (out.size() < width) {
          const auto j = s.next();
          if (!j) break;
          ASSERT_TRUE(offered.insert(*j).second) << l.file << ": item " << *j << " offered twice";
          s.start(*j);
          out.push_back(*j);
        }
        for (size_t i : s.ranking()) ASSERT_EQ(std::count(out.begin(), out.end(), i), 0) << l.file;
        ASSERT_EQ(s.pending(), out.size());
        if (out.empty()) break;
        const size_t j = out.front();
        out.pop_front();
        s.record(j, l.time[j]);
        if (l.time[j] && (best == 0 || *l.time[j] < best)) best = *l.time[j];
      }
      const Replay one = replay(l);
      const double loss = best / one.exhaustive - 1;
      EXPECT_LE(loss, 0.02) << l.file << " with " << width << " picks out";
      worst = std::max(worst, loss);
      within += loss <= 0.02 ? 1 : 0;
      const double share = double(s.measured()) / double(l.items.size());
      if (l.items.size() >= 100) {
        EXPECT_LE(share, width == 2 ? 0.30 : 1.0 / 3) << l.file << " with " << width << " picks out";
        worst_share = std::max(worst_share, share);
      }
      measured += s.measured();
      measured_one += one.measured;
    }
    std::printf("[ guided ] %zu picks out: %zu of %zu landscapes within 2%% (worst %+.2f%%), %zu measurements "
                "against %zu with one, largest share (>= 100 variants) %.1f%%\n",
                width, within, all.size(), 100 * worst, measured, measured_one, 100 * worst_share);
  }
}

TEST(GuidedSearch, IsDeterministicForASeed) {
  const auto& all = recorded();
  ASSERT_FALSE(all.empty());
  const Landscape& l = all.back();
  const auto order = [&](uint64_t seed) {
    GuidedOptions o;
    o.seed = seed;
    GuidedSearch s(l.items, o);
    std::vector<size_t> seen;
    while (auto i = s.next()) {
      seen.push_back(*i);
      s.record(*i, l.time[*i]);
    }
    return seen;
  };
  EXPECT_EQ(order(7), order(7));
}

TEST(GuidedSearch, RankingLeadsWithTheNextPickAndListsEveryUnmeasuredItem) {
  for (const auto& l : recorded()) {
    GuidedSearch s(l.items);
    for (;;) {
      const auto next = s.next();
      const std::vector<size_t> rank = s.ranking();
      std::vector<size_t> sorted = rank, unmeasured;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < l.items.size(); ++i)
        if (!s.was_measured(i)) unmeasured.push_back(i);
      ASSERT_EQ(sorted, unmeasured) << l.file << " after " << s.measured() << " measured";
      if (!next) break;
      ASSERT_FALSE(rank.empty());
      ASSERT_EQ(rank.front(), *next) << l.file << " after " << s.measured() << " measured";
      s.record(*next, l.time[*next]);
    }
  }
}

// The lookahead the compile pool follows: its head is the next pick, it names every unmeasured
// item once, and reading it changes nothing (the search goes on to the same picks).
TEST(GuidedSearch, LookaheadLeadsWithTheNextPickAndLeavesTheSearchAsItWas) {
  int checked = 0;
  for (const auto& l : recorded()) {
    if (l.items.size() < 100) continue;
    ++checked;
    GuidedSearch s(l.items), twin(l.items);
    for (;;) {
      const std::vector<size_t> ahead = s.lookahead(28);
      const auto next = s.next();
      std::vector<size_t> sorted = ahead, unmeasured;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < l.items.size(); ++i)
        if (!s.was_measured(i)) unmeasured.push_back(i);
      ASSERT_EQ(sorted, unmeasured) << l.file << " after " << s.measured() << " measured";
      const auto twin_next = twin.next();
      ASSERT_EQ(next, twin_next) << l.file << " after " << s.measured() << " measured";
      if (!next) break;
      ASSERT_FALSE(ahead.empty());
      EXPECT_EQ(ahead.front(), *next) << l.file << " after " << s.measured() << " measured";
      s.record(*next, l.time[*next]);
      twin.record(*next, l.time[*next]);
    }
  }
  EXPECT_GT(checked, 10);  // the presets' and bench problems' recorded tunes
}

// The picks the tuner asks the worker to build cuDNN plans for (search/guided.cpp, graphs_ahead): the
// lookahead's head, led by the next pick, and empty once the search is done, so that no plan is
// asked for that only the ranking's tail holds (call 87: one built while the finalist round
// waited for it).
TEST(GuidedSearch, PicksAreTheLookaheadsHeadAndNoneOnceTheSearchIsDone) {
  int checked = 0;
  for (const auto& l : recorded()) {
    if (l.items.size() < 100) continue;
    ++checked;
    GuidedSearch s(l.items);
    for (;;) {
      const std::vector<size_t> picks = s.picks(6), ahead = s.lookahead(6);
      ASSERT_LE(picks.size(), 6u);
      std::set<size_t> distinct(picks.begin(), picks.end());
      EXPECT_EQ(distinct.size(), picks.size()) << l.file << ": a pick predicted twice";
      for (size_t p : picks) EXPECT_FALSE(s.was_measured(p)) << l.file << ": a measured item predicted";
      const auto next = s.next();
      if (!next) {
        EXPECT_TRUE(picks.empty()) << l.file << ": picks after the search is done";
        size_t unmeasured = 0;
        for (size_t i = 0; i < l.items.size(); ++i) unmeasured += s.was_measured(i) ? 0 : 1;
        EXPECT_EQ(ahead.size(), unmeasured) << l.file << ": the lookahead is the ranking's tail then";
        break;
      }
      ASSERT_FALSE(picks.empty());
      EXPECT_EQ(picks.front(), *next) << l.file << " after " << s.measured() << " measured";
      s.record(*next, l.time[*next]);
    }
  }
  EXPECT_GT(checked, 10);
}

// The tuner compiles the solutions on a pool while the search measures (compile_queue.hpp); a
// variant the search asks for before the pool reached it is compiled while the search waits.
// Simulated on every recorded landscape with the H200 host's figures (docs/perf-notes.md,
// "Tuning time"): 14 compile threads, a fused conv 2 s to compile, an epilogue kernel 0.3 s,
// cuDNN's configurations nothing; 2 s of baselines before the first pick, 50 ms per measurement.
// The pool in the priors' order against the pool taking the head of the search's ranking first,
// and against the pool taking its lookahead first (the picks it would make if every answer came
// back as it expects), re-read after every measurement (search/guided.cpp, prefer_next()).
constexpr int kSimThreads = 14;
enum class PoolOrder { priors, ranking, lookahead };
double simulated_wait_s(const Landscape& l, PoolOrder order) {
  constexpr double kHeadStart = 2.0, kMeasure = 0.05;
  const auto compile_s = [&](size_t i) {
    const std::string& d = l.items[i].design;
    return d.starts_with("fused-conv") ? 2.0 : d.starts_with("cudnn") ? 0.0 : 0.3;
  };
  GuidedSearch s(l.items);
  std::vector<size_t> by_prior(l.items.size());
  for (size_t i = 0; i < by_prior.size(); ++i) by_prior[i] = i;
  std::stable_sort(by_prior.begin(), by_prior.end(),
                   [&](size_t a, size_t b) { return l.items[a].prior_ms < l.items[b].prior_ms; });
  std::vector<size_t> preferred;
  const auto prefer = [&] {
    if (order == PoolOrder::priors) return;
    preferred = order == PoolOrder::lookahead ? s.lookahead(2 * kSimThreads) : s.ranking();
    preferred.resize(std::min(preferred.size(), size_t(2 * kSimThreads)));
  };
  prefer();
  std::vector<double> done_at(l.items.size(), -1);  // -1: queued
  std::vector<double> free_at(kSimThreads, 0);
  const auto queued = [&](size_t i) { return done_at[i] < 0; };
  const auto advance = [&](double until) {
    for (;;) {
      auto w = std::min_element(free_at.begin(), free_at.end());
      if (*w > until) return;
      auto it = std::find_if(preferred.begin(), preferred.end(), queued);
      if (it == preferred.end()) it = std::find_if(by_prior.begin(), by_prior.end(), queued);
      if (it == by_prior.end()) return;
      done_at[*it] = *w + compile_s(*it);
      *w = done_at[*it];
    }
  };
  double now = kHeadStart, wait = 0;
  while (auto i = s.next()) {
    advance(now);
    if (queued(*i)) done_at[*i] = now + compile_s(*i);  // compiled by the search's own thread
    if (done_at[*i] > now) {
      wait += done_at[*i] - now;
      now = done_at[*i];
    }
    now += kMeasure;
    s.record(*i, l.time[*i]);
    prefer();
  }
  return wait;
}

TEST(GuidedSearch, ACompilePoolTakingTheRankingsHeadFirstWaitsLess) {
  double by_prior = 0, by_ranking = 0, by_lookahead = 0;
  for (const auto& l : recorded()) {
    const double p = simulated_wait_s(l, PoolOrder::priors), r = simulated_wait_s(l, PoolOrder::ranking),
                 a = simulated_wait_s(l, PoolOrder::lookahead);
    if (l.items.size() >= 100)
      std::printf("  %-70s waits %5.1f s in the priors' order, %5.1f s ranking first, %5.1f s looking ahead\n",
                  l.file.c_str(), p, r, a);
    by_prior += p;
    by_ranking += r;
    by_lookahead += a;
  }
  std::printf("[ guided ] simulated compile waits over every landscape: %.1f s in the priors' order, %.1f s with the "
              "ranking's head first, %.1f s with the lookahead first\n", by_prior, by_ranking, by_lookahead);
  EXPECT_LT(by_ranking, 0.85 * by_prior);
  EXPECT_LT(by_lookahead, by_ranking);
}

std::vector<SearchItem> grid(const std::string& design, double prior) {
  std::vector<SearchItem> out;
  for (int64_t a : {1, 2, 4})
    for (int64_t b : {64, 128, 256})
      out.push_back({design + ".a" + std::to_string(a) + ".b" + std::to_string(b), design, {{"a", a}, {"b", b}}, prior});
  return out;
}

TEST(GuidedSearch, ProbesEveryDesignAndFindsTheSeparableOptimum) {
  // Two designs; in "y" time = 1 ms x f(a) x g(b), best at a = 4, b = 128: the additive model
  // in log time finds it without measuring all nine.
  auto items = grid("x", 0);
  for (auto& it : grid("y", 0)) items.push_back(it);
  std::vector<std::optional<double>> t(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const int64_t a = items[i].params[0].second, b = items[i].params[1].second;
    const double f = a == 1 ? 1.6 : a == 2 ? 1.2 : 1.0, g = b == 64 ? 1.3 : b == 128 ? 1.0 : 1.1;
    t[i] = (items[i].design == "x" ? 2.0 : 1.0) * f * g;
  }
  GuidedSearch s(items);
  std::vector<std::string> designs_probed;
  for (int k = 0; k < 2; ++k) {
    const auto i = s.next();
    ASSERT_TRUE(i);
    designs_probed.push_back(items[*i].design);
    s.record(*i, t[*i]);
  }
  EXPECT_EQ(designs_probed, (std::vector<std::string>{"x", "y"}));
  while (auto i = s.next()) s.record(*i, t[*i]);
  EXPECT_DOUBLE_EQ(s.best_ms(), 1.0);
  EXPECT_LT(s.measured(), items.size());
}

TEST(GuidedSearch, SurvivesFailuresAndStopsWhenNothingVerifies) {
  auto items = grid("x", 0);
  GuidedSearch s(items);
  size_t n = 0;
  while (auto i = s.next()) {
    s.record(*i, std::nullopt);  // every variant fails
    ++n;
  }
  EXPECT_EQ(n, items.size());  // a design that never verified is tried to the end
  EXPECT_EQ(s.best_ms(), 0);
  EXPECT_THROW(s.record(0, 1.0), std::logic_error);  // measured twice
}

// How GuidedOptions' defaults were chosen (run with --gtest_also_run_disabled_tests): each
// setting replayed on every recorded landscape; the defaults keep the worst loss under 2% with
// the fewest variants measured on the large spaces.
TEST(GuidedSearchSweep, DISABLED_Options) {
  const auto& all = recorded();
  for (double margin : {0.0, 0.01, 0.02})
    for (double bonus : {0.03, 0.05, 0.08, 0.12})
      for (int min_samples : {2, 3, 4}) {
        GuidedOptions o;
        o.margin = margin;
        o.bonus = bonus;
        o.min_samples = min_samples;
        double worst = 0, worst_frac = 0, sum_frac = 0;
        for (const auto& l : all) {
          const Replay r = replay(l, o);
          worst = std::max(worst, r.best / r.exhaustive - 1);
          const double frac = double(r.measured) / double(r.size);
          sum_frac += frac;
          if (r.size >= 100) worst_frac = std::max(worst_frac, frac);
        }
        std::printf("margin %.2f bonus %.2f min_samples %d: worst %+.2f%%, largest share %.1f%%, mean share %.1f%%\n",
                    margin, bonus, min_samples, 100 * worst, 100 * worst_frac, 100 * sum_frac / double(all.size()));
      }
}

}  // namespace
}  // namespace fusetune::tune
