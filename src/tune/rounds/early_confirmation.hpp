#pragma once
// The baselines' confirmation, early. The confirmation round's baseline and floor (the fastest
// unfused pipeline and the fastest cuDNN conv alone, by their first pass) do not depend on the
// winner, and their sustained timing costs a second or two (call 57, #31: 0.66 s and 0.98 s).
// They are timed while the solutions compile (a cold tune's GPU would idle through its waits for
// compiles); the confirmation round (rounds/confirm.hpp) keeps these figures where the finalist
// round names the same plans and times any other itself.
#include <limits>
#include <map>
#include <vector>

#include "protocol/protocol.hpp"
#include "tune/fleet/worker_fleet.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

class EarlyConfirmation {
 public:
  // The lane tag of its request (WorkerFleet::start): lane 0 confirms.
  static constexpr size_t kTag = std::numeric_limits<size_t>::max();

  // `while_compiling`: the search measures as the solutions compile (the note says when it ran).
  EarlyConfirmation(const RunContext& ctx, WorkerFleet& fleet, Rows& rows, bool while_compiling)
      : ctx_(ctx), fleet_(fleet), rows_(rows), while_compiling_(while_compiling) {}

  // Not run yet, and wanted: a full run's, once the first GPU holds its session.
  [[nodiscard]] bool due() const { return !tried_ && !ctx_.opt.quick && fleet_.has_session(0); }
  // Starts it on the first GPU (idle); its answer comes back with kTag, for finish().
  void start();
  void finish(LaneAnswer a);
  // Row `id`'s figures from it, or nullptr.
  [[nodiscard]] const protocol::TimeFigures* figures(RowId id) const;

 private:
  const RunContext& ctx_;
  WorkerFleet& fleet_;
  Rows& rows_;
  const bool while_compiling_;
  bool tried_ = false;
  std::vector<size_t> idx_;  // what it times (rows stay put meanwhile)
  Clock::time_point t0_;
  std::map<RowId, protocol::TimeFigures> figures_;
};

}  // namespace fusetune::tune
