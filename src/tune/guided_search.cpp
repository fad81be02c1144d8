#include "tune/guided_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "common/fnv1a.hpp"

namespace fusetune::tune {

namespace {

// A parameter an item does not have (cuDNN's default configuration has no knob values).
constexpr int64_t kAbsent = std::numeric_limits<int64_t>::min();

// Backfitting sweeps: the effects settle in a few; ten is plenty for these small tables.
constexpr int kSweeps = 10;

int64_t value_of(const SearchItem& item, const std::string& param) {
  for (const auto& [name, value] : item.params)
    if (name == param) return value;
  return kAbsent;
}

uint64_t fnv1a(uint64_t seed, const std::string& s) {
  return Fnv1a64(Fnv1a64::kShortBasis ^ seed).add(s).value();
}

}  // namespace

GuidedSearch::GuidedSearch(std::vector<SearchItem> items, GuidedOptions options)
    : items_(std::move(items)), opt_(options), state_(items_.size(), State::unmeasured), time_ms_(items_.size(), 0) {
  for (size_t i = 0; i < items_.size(); ++i) {
    auto [it, fresh] = designs_.try_emplace(items_[i].design);
    if (fresh) design_order_.push_back(items_[i].design);
    it->second.items.push_back(i);
  }
  for (auto& [name, d] : designs_) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (size_t i : d.items) {
      lo = std::min(lo, items_[i].prior_ms);
      hi = std::max(hi, items_[i].prior_ms);
    }
    // Equal priors: the model knows nothing that tells the items apart, so the first listed
    // (for cuDNN's engine configurations, its heuristic's first choice) is the best guess.
    d.opaque = hi <= lo * (1 + 1e-9);
    if (d.opaque) {
      d.probe = d.items.front();
    } else {
      d.probe = *std::min_element(d.items.begin(), d.items.end(), [&](size_t a, size_t b) {
        const auto ka = std::tuple(items_[a].prior_ms, items_[a].params.size(), tie_key(a));
        const auto kb = std::tuple(items_[b].prior_ms, items_[b].params.size(), tie_key(b));
        return ka < kb;
      });
    }
  }
}

uint64_t GuidedSearch::tie_key(size_t i) const { return fnv1a(opt_.seed, items_[i].name); }

void GuidedSearch::start(size_t i) {
  if (state_.at(i) != State::unmeasured) throw std::logic_error("GuidedSearch: item started twice");
  state_[i] = State::pending;
  ++pending_count_;
}

void GuidedSearch::record(size_t i, std::optional<double> median_ms) {
  if (state_.at(i) == State::pending) {
    --pending_count_;
  } else if (state_.at(i) != State::unmeasured) {
    throw std::logic_error("GuidedSearch: item measured twice");
  }
  ++measured_count_;
  if (!median_ms || !(*median_ms > 0) || !std::isfinite(*median_ms)) {
    state_[i] = State::failed;
    return;
  }
  state_[i] = State::timed;
  time_ms_[i] = *median_ms;
  if (best_ms_ == 0 || *median_ms < best_ms_) best_ms_ = *median_ms;
}

GuidedSearch::Model GuidedSearch::fit(const Design& d) const {
  std::vector<std::pair<size_t, double>> seen;  // (item, log time)
  std::vector<size_t> pending;
  for (size_t i : d.items) {
    if (state_[i] == State::timed) seen.emplace_back(i, std::log(time_ms_[i]));
    if (state_[i] == State::pending) pending.push_back(i);
  }
  Model m = fit_to(d, seen);
  if (seen.empty() || pending.empty()) return m;
  // A pick still out (on another GPU) counts as measured at the model's own estimate, without
  // the optimism: its parameter values are being tried, so the next pick looks elsewhere
  // instead of where the same optimism points (the "believer" of batch Bayesian optimisation).
  for (size_t i : pending) {
    double s = m.base;
    for (const auto& [p, values] : m.effects)
      if (auto it = values.find(value_of(items_[i], p)); it != values.end()) s += it->second.first;
    seen.emplace_back(i, s);
  }
  return fit_to(d, seen);
}

GuidedSearch::Model GuidedSearch::fit_to(const Design& d, const std::vector<std::pair<size_t, double>>& seen) const {
  Model m;
  if (seen.empty()) return m;
  std::vector<std::string> params;
  for (size_t i : d.items)
    for (const auto& [name, value] : items_[i].params)
      if (std::find(params.begin(), params.end(), name) == params.end()) params.push_back(name);
  const auto effect = [&](const std::string& p, size_t i) {
    const auto& e = m.effects[p];
    const auto it = e.find(value_of(items_[i], p));
    return it == e.end() ? 0.0 : it->second.first;
  };
  double sum = 0;
  for (const auto& [i, t] : seen) sum += t;
  m.base = sum / double(seen.size());
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    for (const auto& p : params) {
      std::map<int64_t, std::pair<double, int>> acc;
      for (const auto& [i, t] : seen) {
        double r = t - m.base;
        for (const auto& q : params)
          if (q != p) r -= effect(q, i);
        auto& [sum_r, n] = acc[value_of(items_[i], p)];
        sum_r += r;
        ++n;
      }
      for (auto& [v, sn] : acc) sn.first /= sn.second;
      m.effects[p] = std::move(acc);
    }
    double b = 0;
    for (const auto& [i, t] : seen) {
      double r = t;
      for (const auto& p : params) r -= effect(p, i);
      b += r;
    }
    m.base = b / double(seen.size());
  }
  return m;
}

double GuidedSearch::predict(const Model& m, size_t i) const {
  const double optimism = std::log(1 - opt_.bonus);
  double s = m.base;
  for (const auto& [p, values] : m.effects) {
    if (values.empty()) continue;
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [v, en] : values) best = std::min(best, en.first);
    const auto it = values.find(value_of(items_[i], p));
    if (it == values.end()) {
      s += best + optimism;  // never measured: it may beat the best value seen
    } else if (it->second.second < opt_.min_samples) {
      s += std::min(it->second.first, best + optimism);  // measured too rarely to rule out
    } else {
      s += it->second.first;
    }
  }
  return std::exp(s);
}

std::optional<size_t> GuidedSearch::next() {
  const std::vector<Ranked> r = rank();
  if (r.empty()) return std::nullopt;
  const auto& [i, predicted] = r.front();
  if (!predicted) return i;  // a probe, or a design without a model
  // By the models: only an item predicted to beat the best by the margin is worth measuring.
  if (best_ms_ == 0 || *predicted >= best_ms_ * (1 - opt_.margin)) return std::nullopt;
  return i;
}

double GuidedSearch::expected_ms(size_t i) const {
  for (const auto& [name, d] : designs_) {
    if (std::find(d.items.begin(), d.items.end(), i) == d.items.end()) continue;
    if (std::any_of(d.items.begin(), d.items.end(), [&](size_t j) { return state_[j] == State::timed; })) {
      const Model m = fit(d);
      double s = m.base;
      for (const auto& [p, values] : m.effects)
        if (auto it = values.find(value_of(items_[i], p)); it != values.end()) s += it->second.first;
      return std::exp(s);
    }
    break;
  }
  // No model: the prior, scaled by the median ratio of measured time to prior so far.
  std::vector<double> ratio;
  for (size_t j = 0; j < items_.size(); ++j)
    if (state_[j] == State::timed && items_[j].prior_ms > 0) ratio.push_back(time_ms_[j] / items_[j].prior_ms);
  double scale = 1;
  if (!ratio.empty()) {
    std::nth_element(ratio.begin(), ratio.begin() + std::ptrdiff_t(ratio.size() / 2), ratio.end());
    scale = ratio[ratio.size() / 2];
  }
  if (items_[i].prior_ms > 0) return items_[i].prior_ms * scale;
  return best_ms_ > 0 ? best_ms_ : 1.0;
}

std::vector<size_t> GuidedSearch::picks(size_t n) const {
  GuidedSearch s = *this;
  std::vector<size_t> out;
  while (out.size() < n) {
    const std::optional<size_t> j = s.next();
    if (!j) break;
    out.push_back(*j);
    s.record(*j, s.expected_ms(*j));
  }
  return out;
}

std::vector<size_t> GuidedSearch::lookahead(size_t n) const {
  std::vector<size_t> out = picks(n);
  std::vector<bool> taken(items_.size(), false);
  for (size_t j : out) taken[j] = true;
  for (size_t j : ranking())
    if (!taken[j]) out.push_back(j);
  return out;
}

std::vector<size_t> GuidedSearch::ranking() const {
  std::vector<size_t> out;
  for (const auto& [i, predicted] : rank()) out.push_back(i);
  return out;
}

std::vector<GuidedSearch::Ranked> GuidedSearch::rank() const {
  std::vector<Ranked> out;
  std::vector<bool> placed(items_.size(), false);
  const auto take = [&](size_t i) {
    out.push_back({i, std::nullopt});
    placed[i] = true;
  };
  // Every design's probe first, in the order the designs came.
  for (const auto& name : design_order_) {
    const Design& d = designs_.at(name);
    if (d.probe && state_[*d.probe] == State::unmeasured) take(*d.probe);
  }
  // A design none of whose measured items verified has no model: its next item by the prior
  // (a failing design usually fails fast, and one that verifies may still win).
  std::vector<const Design*> unmodelled;
  for (const auto& name : design_order_) {
    const Design& d = designs_.at(name);
    if (std::any_of(d.items.begin(), d.items.end(), [&](size_t i) { return state_[i] == State::timed; })) continue;
    unmodelled.push_back(&d);
    std::optional<size_t> pick;
    for (size_t i : d.items) {
      if (state_[i] != State::unmeasured || placed[i]) continue;
      if (!pick || std::tuple(items_[i].prior_ms, tie_key(i)) < std::tuple(items_[*pick].prior_ms, tie_key(*pick)))
        pick = i;
    }
    if (pick) take(*pick);
  }
  // Then every other item by its prediction (a design without a model: by its prior; next() has
  // taken one of that design's items above, so only the compile queue reads these).
  std::vector<std::tuple<double, uint64_t, size_t, bool>> rest;
  for (const auto& name : design_order_) {
    const Design& d = designs_.at(name);
    const bool modelled = std::find(unmodelled.begin(), unmodelled.end(), &d) == unmodelled.end();
    const Model m = modelled ? fit(d) : Model{};
    for (size_t i : d.items)
      if (state_[i] == State::unmeasured && !placed[i])
        rest.emplace_back(modelled ? predict(m, i) : items_[i].prior_ms, tie_key(i), i, modelled);
  }
  std::sort(rest.begin(), rest.end());
  for (const auto& [p, key, i, modelled] : rest) out.push_back({i, modelled ? std::optional<double>(p) : std::nullopt});
  return out;
}

}  // namespace fusetune::tune
