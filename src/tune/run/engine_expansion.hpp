#pragma once
// Engine expansion: each cudnn-fused template row becomes one row per engine configuration the
// GPU's cuDNN offers for its graph (listed, and built unless `build` is false, by the first GPU's
// worker); those cuDNN could not build stay as not_supported rows with its reason. Runs before
// any solution is measured, so the positions it shifts are referenced nowhere yet.
#include "tune/fleet/worker_fleet.hpp"
#include "tune/run/rows.hpp"
#include "tune/run/run_context.hpp"

namespace fusetune::tune {

// `decision`: under TuneDecision::only, only the configurations named there stay. `build`: false
// when the search builds each configuration as it runs it.
void expand_engines(const RunContext& ctx, WorkerFleet& fleet, Rows& rows, const TuneDecision& decision, bool build);

}  // namespace fusetune::tune
