#pragma once
// `tune`'s results as people read them: the problem and the device, the parameters with one
// value wherever they appear among the shown rows printed once ("fixed"), then the floors and baselines, the ten fastest verified variants
// and the winner (marked; rows within the measured noise of it marked too), failures counted by
// status, the phases' wall times and the winner's line: about 25 lines, under 120 columns.
// `--all` shows every variant, failures with their reasons.
#include <string>

#include "tune/tuner.hpp"

namespace fusetune::cli {

struct TuneTableOptions {
  bool all = false;        // every variant, not the top ten
  size_t top = 10;         // verified solutions shown without --all
  size_t width = 120;      // columns the table must fit (variant names and parameters are cut to fit)
  size_t max_notes = 2;    // note: lines shown without --all
};

[[nodiscard]] std::string tune_table(const tune::TuneReport& rep, const TuneTableOptions& options = {});

// A parameter as shown: layouts by name ("layout=nhwc", "in=nhwc"), others as name=value.
[[nodiscard]] std::string param_display(const std::string& name, int64_t value);

}  // namespace fusetune::cli
