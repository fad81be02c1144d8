#include "tune/rounds/early_confirmation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tune/rounds/retime.hpp"

namespace fusetune::tune {

using codegen::Role;

void EarlyConfirmation::start() {
  if (!due()) return;
  tried_ = true;
  idx_.clear();
  for (Role role : {Role::baseline, Role::floor})
    if (auto i = rows_.fastest(rows_.ready(role))) idx_.push_back(*i);
  if (idx_.empty()) return;
  ctx_.progress("confirming the baselines while the solutions compile", 0, 1, "");
  t0_ = Clock::now();
  ctx_.trace(fmt::format("lane 0 confirms the baselines early ({} plans)", idx_.size()));
  fleet_.start(0, kTag, to_json(retime_request(rows_, ctx_.opt, idx_, protocol::TimeRound::confirmation, true)),
               retime_timeout(ctx_.opt, idx_.size()));
}

void EarlyConfirmation::finish(LaneAnswer a) {
  ctx_.trace("lane 0's early confirmation answered");
  const auto figures = retime_figures(ctx_, a, protocol::TimeRound::confirmation);
  std::vector<std::string> names;
  for (size_t i : idx_) {
    names.push_back(rows_.result(i).variant.name);
    figures_[rows_[i].id] = figures.at(names.back());
  }
  // Up to when its answer was taken: the search may have been busy then.
  ctx_.add_note(fmt::format("confirmation round of {} run {}, {:.2f} s", fmt::join(names, " and "),
                            while_compiling_ ? "while the solutions compiled" : "before the solutions were measured",
                            std::chrono::duration<double>(Clock::now() - t0_).count()));
}

const protocol::TimeFigures* EarlyConfirmation::figures(RowId id) const {
  const auto it = figures_.find(id);
  return it == figures_.end() ? nullptr : &it->second;
}

}  // namespace fusetune::tune
