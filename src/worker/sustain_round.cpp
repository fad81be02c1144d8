#include "worker/sustain_round.hpp"

#include <algorithm>

namespace fusetune::worker {

namespace {
constexpr double kMinTurnMs = 20;  // a turn at least this long however many plans take turns
}  // namespace

SustainRound::SustainRound(std::vector<protocol::SustainPolicy> policies) {
  for (size_t p = 0; p < policies.size(); ++p) {
    if (p > 0) policies[p].heat_ms = 0;  // its first turn comes after the first plan's heat
    plans_.push_back(Plan{policies[p], {}, {}, 0, false, std::nullopt});
    order_.push_back(p);
  }
  next_turn();
}

std::optional<size_t> SustainRound::current() const { return turn_; }

// The cap counts the busy time of all the plans together: it bounds the round's time, as it
// bounded one plan's when each ran alone (call 100: capped per plan, turns took 6 s).
bool SustainRound::over_cap(const Plan& pl, size_t samples, double round_busy) {
  return int(samples) >= std::max(1, pl.policy.max_samples) || round_busy >= pl.policy.max_ms;
}

// Each plan gets at least one sample.
bool SustainRound::capped(size_t p) const {
  const Plan& pl = plans_[p];
  return !pl.sample_ms.empty() && over_cap(pl, pl.sample_ms.size(), round_busy_);
}

bool SustainRound::would_close(double busy_ms) const {
  if (!turn_) return true;
  const Plan& pl = plans_[*turn_];
  const double b = std::max(0.0, busy_ms);
  if (over_cap(pl, pl.sample_ms.size() + 1, round_busy_ + b)) return true;  // at its cap the plan stops
  if (!pl.heated) return turn_busy_ + b >= pl.policy.heat_ms;
  // Every plan takes a turn each round: a round lasts one window of a plan alone.
  const double window = std::max(kMinTurnMs, pl.policy.window_ms / double(plans_.size()));
  return turn_busy_ + b >= window && turn_samples_ + 1 >= pl.policy.min_window;
}

bool SustainRound::add(double sample_ms, double busy_ms) {
  if (!turn_) return true;
  const bool closes = would_close(busy_ms);
  Plan& pl = plans_[*turn_];
  const double b = std::max(0.0, busy_ms);
  pl.sample_ms.push_back(sample_ms);
  pl.busy_total += b;
  round_busy_ += b;
  turn_busy_ += b;
  ++turn_samples_;
  if (!closes) return false;
  turn_busy_ = 0;
  turn_samples_ = 0;
  if (!pl.heated && !capped(*turn_)) {  // the heat is over: its first window follows in this turn
    pl.heated = true;
    pl.window_start.push_back(pl.sample_ms.size());
    return true;
  }
  pl.heated = true;
  next_turn();
  return true;
}

protocol::TimingSummary SustainRound::window(const Plan& pl, size_t w) {
  const size_t b = pl.window_start[w];
  const size_t e = w + 1 < pl.window_start.size() ? pl.window_start[w + 1] : pl.sample_ms.size();
  return protocol::summarize({pl.sample_ms.begin() + std::ptrdiff_t(b), pl.sample_ms.begin() + std::ptrdiff_t(e)});
}

std::optional<size_t> SustainRound::settled(size_t p) const {
  const Plan& pl = plans_[p];
  const size_t k = size_t(std::max(2, pl.policy.settle_windows));
  if (pl.window_start.size() < k) return std::nullopt;
  std::vector<protocol::TimingSummary> windows;
  for (size_t w = pl.window_start.size() - k; w < pl.window_start.size(); ++w) windows.push_back(window(pl, w));
  if (!windows_settled(windows, pl.policy)) return std::nullopt;
  return pl.window_start[pl.window_start.size() - k];
}

// At a cap: its last settle_windows windows; with fewer, every sample after its heat (all of
// them if the heat never ended).
size_t SustainRound::cap_first(size_t p) const {
  const Plan& pl = plans_[p];
  const size_t k = size_t(std::max(2, pl.policy.settle_windows));
  if (pl.window_start.size() >= k) return pl.window_start[pl.window_start.size() - k];
  if (!pl.window_start.empty() && pl.window_start.front() < pl.sample_ms.size()) return pl.window_start.front();
  return 0;
}

// Asked at the end of each round. The plans leave together, once all of them have settled at
// once, or at the cap: one that settled early goes on taking turns, so that each figure is
// made of the same last rounds. Released one by one, the plan whose windows happened to agree
// first would keep a figure from earlier in a drift than the other's (the first draft of this
// schedule did: 0.5% between two equal plans on a simulated GPU slowing 0.4% a window, the drift
// of tests/sustain_round_test.cpp's EqualPlansGetEqualFiguresWhileTheGpuStillDrifts).
bool SustainRound::release() {
  bool cap = false, all = true;
  std::vector<std::optional<size_t>> firsts;
  for (size_t p = 0; p < plans_.size(); ++p) {
    cap = cap || capped(p);
    firsts.push_back(settled(p));
    all = all && firsts.back().has_value();
  }
  if (!cap && !all) return false;
  for (size_t p = 0; p < plans_.size(); ++p) plans_[p].first = all ? *firsts[p] : cap_first(p);
  return true;
}

void SustainRound::next_turn() {
  turn_busy_ = 0;
  turn_samples_ = 0;
  if (order_.empty()) {
    if (release()) {
      turn_.reset();
      return;
    }
    // The next round, in the order opposite to the last one's.
    ++round_;
    for (size_t p = 0; p < plans_.size(); ++p) order_.push_back(p);
    if (round_ % 2 == 1) std::reverse(order_.begin(), order_.end());
  }
  const size_t p = order_.front();
  order_.erase(order_.begin());
  Plan& pl = plans_[p];
  turn_ = p;
  if (!(pl.policy.heat_ms > 0)) pl.heated = true;  // no heat: its windows start at once
  if (pl.heated) pl.window_start.push_back(pl.sample_ms.size());
}

std::vector<double> SustainRound::window_medians(size_t p) const {
  const Plan& pl = plans_.at(p);
  std::vector<double> out;
  for (size_t w = 0; w < pl.window_start.size(); ++w)
    if (const protocol::TimingSummary t = window(pl, w); t.count > 0) out.push_back(t.median);
  return out;
}

}  // namespace fusetune::worker
