#include "tune/rounds/confirm.hpp"

#include <algorithm>
#include <limits>

#include "tune/rounds/retime.hpp"
#include "tune/tie_break.hpp"

namespace fusetune::tune {

using codegen::Role;

void confirmation_round(Measurer& m) {
  const RunContext& ctx = m.ctx();
  TuneReport& rep = ctx.report;
  Rows& rows = m.rows();
  if (!rep.winner) return;
  std::vector<size_t> round{*rep.winner};
  auto add = [&](std::optional<size_t> i) {
    if (i && std::find(round.begin(), round.end(), *i) == round.end()) round.push_back(*i);
  };
  add(rep.runner_up);
  add(rep.unfused);
  // One floor: the fastest by the finalist round (by the first pass where no floor was
  // contested there), the cuDNN figure the report compares with.
  // The slower layout's floor would cost a sustained run (about 1 s on the presets, 1.6 s on
  // problems of microseconds, call 52) for a figure nothing is judged by.
  const std::optional<size_t> floor = rows.fastest(rows.ready(Role::floor));
  add(floor);
  ctx.progress("confirmation round", 0, 1, "");
  // Plans confirmed while the solutions compiled keep those figures. The winner and the
  // runner-up, whose comparison is the tie rule's verdict, take turns (sustain_round.hpp): the
  // same stretch of the GPU's clocks for both. A baseline of the pair confirmed early is timed
  // again in it.
  std::vector<size_t> fresh, early;
  for (size_t i : round) {
    const bool in_pair = i == *rep.winner || (rep.runner_up && i == *rep.runner_up);
    (m.early().figures(rows[i].id) != nullptr && !in_pair ? early : fresh).push_back(i);
  }
  retime(ctx, m.fleet(), rows, fresh, protocol::TimeRound::confirmation, rep.runner_up ? 2 : 0);
  for (size_t i : early) {
    rows.result(i).time = *m.early().figures(rows[i].id);
    rows.result(i).gpu = m.fleet().device(0);
  }
  if (!early.empty()) rows.report_batch(rep, ctx.opt, early);
  if (ctx.opt.quick && fresh.size() >= 2) rep.confirm_rounds = std::max(1, ctx.opt.retime_rounds);
  if (!ctx.opt.quick) {  // sustained: the samples in each settled figure, the fewest of the round
    rep.confirm_rounds = std::numeric_limits<int>::max();
    for (size_t i : round) rep.confirm_rounds = std::min(rep.confirm_rounds, rows.result(i).time.count);
  }
  // The finalist round chose the winner; should the confirmation round order the complete
  // pipelines in it differently (noise between nearly equal plans), its order stands, so the
  // winner is never slower than another pipeline in the figures shown beside it.
  std::vector<size_t> complete;
  for (size_t i : round)
    if (rows.result(i).variant.role() != Role::floor) complete.push_back(i);
  std::stable_sort(complete.begin(), complete.end(), [&](size_t a, size_t b) {
    return rows.result(a).time.median_ms < rows.result(b).time.median_ms;
  });
  rep.winner = complete[0];
  rep.runner_up = complete.size() > 1 ? std::optional(complete[1]) : std::nullopt;
  // The winner has to beat the runner-up by more than the noise measured in this round;
  // otherwise the two tie, and the fixed secondary key decides (tie_break.hpp).
  if (rep.runner_up) {
    rep.tie = decide_tie(rows.result(*rep.winner), rows.result(*rep.runner_up));
    if (rep.tie.swap) std::swap(*rep.winner, *rep.runner_up);
  }
  rep.cudnn = floor;
}

}  // namespace fusetune::tune
