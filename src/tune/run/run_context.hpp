#pragma once
// What every stage of one tune reads (the problem, the options, the trace) and the report it
// writes its findings into (notes, cuDNN's choices, the winner). The stages keep the state they
// work from to themselves: the workers (fleet/worker_fleet.hpp), the rows and their CUBINs
// (run/rows.hpp, run/compile_stage.hpp), the measuring (run/measurer.hpp), the rounds
// (rounds/), the search (search/).
#include <algorithm>
#include <chrono>
#include <string>

#include "spec/problem.hpp"
#include "tune/trace.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {

using Clock = std::chrono::steady_clock;

[[nodiscard]] inline std::chrono::milliseconds seconds(double s) { return std::chrono::milliseconds(int64_t(s * 1000)); }

struct RunContext {
  const spec::Problem& problem;
  const TuneOptions& opt;
  TuneTrace& trace;
  TuneReport& report;

  void progress(const std::string& what, size_t done, size_t total, const std::string& detail) const {
    if (opt.progress) opt.progress(what, done, total, detail);
  }
  // A note for the report, once.
  void add_note(const std::string& n) const {
    if (std::find(report.notes.begin(), report.notes.end(), n) == report.notes.end()) report.notes.push_back(n);
  }
};

}  // namespace fusetune::tune
