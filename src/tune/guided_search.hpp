#pragma once
// `tune --strategy model`: which variant to measure next, and when to stop (docs/commands.md: "Search
// strategies"). GPU-free and deterministic, so it is tested by replaying the landscapes of
// recorded H200 tunes (tests/guided_search_test.cpp).
//
// The model, per design (variants of one design share a plan shape and differ in parameters):
//   - a prior from the GPU's figures (tune/cost_model.hpp) picks the design's first variant
//     (its probe); a design whose variants the prior cannot tell apart (cuDNN's engine
//     configurations) is probed with the configuration cuDNN lists first, its heuristic's choice;
//   - once measured, log(time) = base + a main effect per parameter value, fitted by backfitting
//     to the design's measured variants (parameters of these kernels act nearly independently:
//     a vector width helps or hurts whatever the block size);
//   - a value measured fewer than `min_samples` times is optimistic: it may be `bonus` better than
//     the best value of its parameter seen so far, so every value gets tried where it could win;
//   - an item started and not answered yet (another GPU measures it: start()) counts as measured at
//     the model's estimate without that optimism, so the next pick looks elsewhere.
// Next: the unmeasured variant with the smallest prediction over all designs. Stop: when no
// unmeasured variant is predicted faster than (1 - margin) x the best measured time.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fusetune::tune {

struct SearchItem {
  std::string name;    // unique
  std::string design;  // items of one design share a model
  std::vector<std::pair<std::string, int64_t>> params;
  double prior_ms = 0;  // the cost model's estimate (tune/cost_model.hpp); 0 when it has none
};

struct GuidedOptions {
  // Chosen by replaying the 47 H200 tunes recorded under docs/runs/ (tests/guided_search_test.cpp,
  // DISABLED_Options prints the sweep): the worst best 1.5% slower than exhaustive's, at most 28%
  // of a space of 100 or more variants measured, 12% on average.
  double margin = 0.02;
  double bonus = 0.12;
  int min_samples = 2;
  uint64_t seed = 0;  // breaks ties between equal predictions (deterministic for a seed)
};

class GuidedSearch {
 public:
  GuidedSearch(std::vector<SearchItem> items, GuidedOptions options = {});

  // The next item to measure, or nullopt when the search is done.
  [[nodiscard]] std::optional<size_t> next();
  // Every unmeasured item, in the order the search would measure them if nothing new were
  // learned: the first is next() (when next() has one); items predicted no faster than the bar
  // come last, by prediction. The compile queue follows it (search/guided.cpp): what the search will ask
  // for is compiled first.
  [[nodiscard]] std::vector<size_t> ranking() const;
  // What measuring item i gave: its median time, or nullopt when it failed (not verified).
  void record(size_t i, std::optional<double> median_ms);
  // Every unmeasured item, like ranking(), but led by up to n picks the search would make if
  // every answer came back as it expects (a modelled design's estimate without the optimism; an
  // unmodelled design's prior scaled by how the measured times compare with their priors). The
  // compile pool takes these first (search/guided.cpp): right after a design's probe the search tries
  // each parameter's untried values in turn, which this foresees, where ranking()'s head holds
  // the items that tie for the very next pick. Costs n rankings (about 6 ms for n = 28 on a
  // 260-variant space on the dev machine).
  [[nodiscard]] std::vector<size_t> lookahead(size_t n) const;
  // lookahead()'s head alone: up to n picks the search would make if every answer came back as it
  // expects, none once it expects to stop. What the tuner asks the worker to build ahead
  // (search/guided.cpp): the ranking's head also holds items the search will never pick, and near its end
  // only those (a cuDNN plan asked for there was built while the finalist round waited for it).
  [[nodiscard]] std::vector<size_t> picks(size_t n) const;
  // Item i is being measured (on another GPU) and its answer is not in yet: neither next() nor
  // ranking() offers it again, and the models do not count it until record(i, ...). With
  // several GPUs the tuner keeps one item started per GPU (search/guided.cpp, GuidedSearcher::measure).
  void start(size_t i);
  [[nodiscard]] size_t pending() const { return pending_count_; }

  [[nodiscard]] size_t measured() const { return measured_count_; }
  [[nodiscard]] size_t size() const { return items_.size(); }
  [[nodiscard]] bool was_measured(size_t i) const {
    return state_.at(i) == State::failed || state_.at(i) == State::timed;
  }
  // The best time measured so far (0 when none).
  [[nodiscard]] double best_ms() const { return best_ms_; }

 private:
  enum class State { unmeasured, pending, failed, timed };
  struct Design {
    std::vector<size_t> items;  // in the order given
    bool opaque = false;        // the prior tells its items apart no better than a guess
    std::optional<size_t> probe;
  };
  struct Model {
    double base = 0;
    // parameter -> value -> (effect, times measured)
    std::map<std::string, std::map<int64_t, std::pair<double, int>>> effects;
  };

  // One ranked item: its model's prediction, or none (a probe, a design without a model).
  struct Ranked {
    size_t item = 0;
    std::optional<double> predicted;
  };
  // ranking() with each item's prediction: next() is its first item, unless that one is ranked
  // by a model and not predicted to beat the best by the margin.
  [[nodiscard]] std::vector<Ranked> rank() const;
  [[nodiscard]] Model fit(const Design& d) const;
  // The backfitted model of (item, log time) pairs.
  [[nodiscard]] Model fit_to(const Design& d, const std::vector<std::pair<size_t, double>>& seen) const;
  [[nodiscard]] double predict(const Model& m, size_t i) const;
  // What measuring item i is expected to give, without the optimism (lookahead()).
  [[nodiscard]] double expected_ms(size_t i) const;
  [[nodiscard]] uint64_t tie_key(size_t i) const;

  std::vector<SearchItem> items_;
  GuidedOptions opt_;
  std::vector<State> state_;
  std::vector<double> time_ms_;
  std::map<std::string, Design> designs_;
  std::vector<std::string> design_order_;  // first appearance
  size_t measured_count_ = 0;
  size_t pending_count_ = 0;
  double best_ms_ = 0;
};

}  // namespace fusetune::tune
