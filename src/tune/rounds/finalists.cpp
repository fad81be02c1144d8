#include "tune/rounds/finalists.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "tune/rounds/retime.hpp"
#include "tune/run/margins.hpp"

namespace fusetune::tune {

using codegen::Role;

namespace {

// The winner and runner-up among the finalists and the baselines, by the round's figures.
void pick_winner(Rows& rows, TuneReport& rep, const std::vector<size_t>& finalists) {
  std::vector<size_t> complete = finalists;
  for (size_t i : rows.ready(Role::baseline)) complete.push_back(i);
  std::stable_sort(complete.begin(), complete.end(), [&](size_t a, size_t b) {
    return rows.result(a).time.median_ms < rows.result(b).time.median_ms;
  });
  rep.winner = complete.empty() ? std::nullopt : std::optional(complete[0]);
  rep.runner_up = complete.size() < 2 ? std::nullopt : std::optional(complete[1]);
  rep.unfused = rows.fastest(rows.ready(Role::baseline));
  rep.cudnn = rows.fastest(rows.ready(Role::floor));
}

}  // namespace

void finalist_round(Measurer& m) {
  const RunContext& ctx = m.ctx();
  Rows& rows = m.rows();
  const auto estimate = [&](size_t i) { return m.estimate(i); };
  std::map<std::string, std::vector<size_t>> by_design;
  double best = std::numeric_limits<double>::infinity();
  for (size_t i : rows.ready(Role::solution)) {
    by_design[rows.result(i).variant.design].push_back(i);
    best = std::min(best, estimate(i));
  }
  std::vector<size_t> finalists;
  for (auto& [design, idx] : by_design) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return estimate(a) < estimate(b); });
    // A design whose best is out of reach of the best of all sends its best alone: the report
    // still shows it beside the others, and the round stays short (on #31, four epilogue and
    // three cuDNN-fusion variants 40-60% behind the fused conv were re-timed for nothing).
    if (estimate(idx[0]) > (1 + kOutOfReach) * best) {
      finalists.push_back(idx[0]);
      continue;
    }
    // The first pass times each variant in a short burst, and a burst right after a cool
    // spell runs at boost clocks: on the H200 two variants of one design swapped places by
    // 8% between the first pass and sustained timing (docs/runs/2026-12-02/call39-epilogue-ilp.tar.xz,
    // `mish | mish`). So every variant within kFinalistMargin of the design's best goes on to
    // the interleaved round too, up to kMaxFinalists (or TuneOptions::finalists if larger).
    size_t keep = std::min(idx.size(), size_t(std::max(1, ctx.opt.finalists)));
    while (keep < idx.size() && keep < size_t(std::max(ctx.opt.finalists, kMaxFinalists)) &&
           estimate(idx[keep]) <= (1 + kFinalistMargin) * estimate(idx[0]))
      ++keep;
    finalists.insert(finalists.end(), idx.begin(), idx.begin() + std::ptrdiff_t(keep));
  }
  std::vector<size_t> round = finalists;
  for (Role role : {Role::baseline, Role::floor})
    for (size_t i : round_references(rows, rows.ready(role), role == Role::baseline ? std::optional(best) : std::nullopt,
                                     estimate))
      round.push_back(i);
  ctx.progress("re-timing finalists interleaved", 0, 1, "");
  retime(ctx, m.fleet(), rows, round, protocol::TimeRound::finalists);
  pick_winner(rows, ctx.report, finalists);
}

// Another of its role within kFinalistMargin of the fastest: the round says which is the
// fastest, the one the report compares with and the confirmation round times. The others keep
// their first passes; the fastest of each role is timed sustained in the confirmation round (or
// was, early). On #31 the two unfused pipelines and two cuDNN convs were 44% of each finalist
// round's GPU time (docs/runs/2026-12-04/call90-picks-ahead-31.tar.xz).
std::vector<size_t> round_references(const Rows& rows, std::vector<size_t> idx, std::optional<double> reach,
                                     const std::function<double(size_t)>& estimate) {
  auto median = [&](size_t i) { return rows.result(i).time.median_ms; };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return median(a) < median(b); });
  if (idx.empty()) return {};
  const double t0 = median(idx[0]);
  const bool contested = idx.size() > 1 && median(idx[1]) <= (1 + kFinalistMargin) * t0;
  const auto needed = [&](size_t i) {
    return (contested && median(i) <= (1 + kFinalistMargin) * t0) ||  // near the fastest
           (reach && estimate(i) <= (1 + kOutOfReach) * *reach);       // could win
  };
  const auto first = std::find_if(idx.begin(), idx.end(), needed);
  if (first == idx.end()) return {};
  // Which of a role is the fastest must not be read off mixed figures: one re-timed under load
  // can read up to 10% slower than a burst (kOutOfReach's note), so every other within 25% of
  // the fastest one re-timed is re-timed too.
  const double mixed = (1 + kOutOfReach) * median(*first);
  std::vector<size_t> out;
  for (size_t i : idx)
    if (needed(i) || median(i) <= mixed) out.push_back(i);
  return out;
}

}  // namespace fusetune::tune
