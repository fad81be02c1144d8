#pragma once
// The finalist round: per design, the best by its first pass (its own kernels' time plus the
// conv's: Measurer::estimate) and every other within kFinalistMargin, re-timed interleaved with
// the baselines and floors whose figures can change an outcome; the fastest complete pipeline is
// the winner (TuneReport::winner, runner_up, unfused, cudnn).
#include <functional>
#include <optional>
#include <vector>

#include "tune/run/measurer.hpp"
#include "tune/run/rows.hpp"

namespace fusetune::tune {

void finalist_round(Measurer& m);

// The baselines (or floors) `idx` that the finalist round re-times: only where its figures can
// change an outcome. `reach`: the best solution's estimate (infinite with none) for baselines,
// none for floors, which never win.
[[nodiscard]] std::vector<size_t> round_references(const Rows& rows, std::vector<size_t> idx,
                                                   std::optional<double> reach,
                                                   const std::function<double(size_t)>& estimate);

}  // namespace fusetune::tune
