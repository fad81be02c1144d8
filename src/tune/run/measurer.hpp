#pragma once
// The first passes: rows sent to the lanes to be verified and timed, their answers filed as they
// come (a lost or faulted worker replaced), and the batches handed to TuneOptions::on_batch. It
// owns what the answers teach: which rows are answered, the batch not yet handed on, and the
// conv's time per layout that every design's estimate uses. The searchers (search/) decide what
// it measures; the early confirmation shares lane 0 with it (its answer is routed back there).
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "tune/cost_model.hpp"
#include "tune/fleet/worker_fleet.hpp"
#include "tune/rounds/early_confirmation.hpp"
#include "tune/run/compile_stage.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

class Measurer {
 public:
  Measurer(const RunContext& ctx, const gpu::DeviceLimits& limits, Rows& rows, WorkerFleet& fleet,
           CompileStage& compile, EarlyConfirmation& early)
      : ctx_(ctx), limits_(limits), rows_(rows), fleet_(fleet), compile_(compile), early_(early) {}

  [[nodiscard]] const RunContext& ctx() const { return ctx_; }
  [[nodiscard]] Rows& rows() { return rows_; }
  [[nodiscard]] WorkerFleet& fleet() { return fleet_; }
  [[nodiscard]] CompileStage& compile() { return compile_; }
  [[nodiscard]] EarlyConfirmation& early() { return early_; }

  // Verifies and times every row with this role: the solutions on every GPU (an idle one takes
  // the next), the baselines and floors on the first, whose conv time ranks the solutions.
  void measure_all(codegen::Role role);
  // Sends row i to lane l to be verified and timed; false when there is nothing to run (it
  // failed to compile). `ahead`: rows whose cuDNN plans lane l's worker builds meanwhile.
  bool dispatch(size_t i, size_t l, const std::vector<size_t>& ahead = {});
  // An idle lane among the first `width`, once one answer is filed if all of them are busy.
  size_t idle_lane(size_t width);
  // Files lane l's answer (it has one, or will): a row's, or the early confirmation's.
  void collect(size_t l);
  // Files answers until row i's is in.
  void wait_for(size_t i);
  // Files every answer still out.
  void drain();
  // The early confirmation, whole, before measuring (every compile waited for first).
  void confirm_early_now();
  // Hands the rows answered so far to on_batch (batches of ~16; `force`: whatever there is).
  void flush(bool force);
  // Row i, filed as it is (nothing to run), goes with the next batch.
  void file_unrun(size_t i) { batch_.push_back(i); }

  // The conv alone per layout, as the floors' first passes measured it (after the baselines).
  void learn_conv();
  // A pipeline's time with its conv steps at the conv's time, its other steps at their own:
  // generated kernels time steadily, the conv varies run to run by several percent.
  [[nodiscard]] double estimate(size_t i) const;
  // What the cost model knows now: the copy rate once the worker's setup measured it, the conv
  // alone once the baselines did (before, prior_ms counts a conv step at its FLOP floor).
  [[nodiscard]] CostInputs cost_inputs() const;

 private:
  protocol::RunRequest run_request(size_t i) const;
  void apply_run(size_t l, size_t i, LaneAnswer a);

  const RunContext& ctx_;
  const gpu::DeviceLimits& limits_;
  Rows& rows_;
  WorkerFleet& fleet_;
  CompileStage& compile_;
  EarlyConfirmation& early_;
  std::set<size_t> answered_;  // rows whose answers apply_run() filed since dispatch()
  std::vector<size_t> batch_;  // answered rows not handed to on_batch yet
  std::map<int, double> conv_ms_;  // by spec::Layout
};

}  // namespace fusetune::tune
