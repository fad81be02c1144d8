#pragma once
// One tune result as every renderer reads it: the table (cli/tune_table), the CSV (cli/cmd_tune),
// the JSON document (report_json) and the database writer (db_bridge). The figures derived from
// a result and its report -- the kernel's bandwidth and share of the measured copy rate, the
// speedups over the baselines, whether its error figures mean something -- are derived here,
// once, so the four cannot disagree (issue 40, "typed edges").
#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

#include "protocol/variant_result.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {

// The kernel time of a plan against the bytes its kernels must move.
struct KernelRate {
  double median_ms = 0;
  double bytes = 0;
  double gbps = 0;
  double pct_copy = 0;  // of the copy bandwidth measured in the same tune; 0 when not measured
};

struct ResultRow {
  const protocol::VariantResult& result;
  std::string_view candidate;  // the registry's name
  std::string_view role;       // "baseline" | "floor" | "solution"
  std::string_view status;     // protocol::status_name
  nlohmann::json params;       // one flat object of integers
  std::optional<int> registers;  // compiled: registers and spills (loads + stores)
  std::optional<int> spills;
  std::optional<KernelRate> kernel;      // timed, with a kernel time and the bytes it moves
  std::optional<double> vs_unfused;      // timed, and the tune has the baseline
  std::optional<double> vs_cudnn;        // timed, and the tune has the conv-alone floor
  bool checked = false;  // compared with the reference (verified or wrong): its error figures mean something
};

[[nodiscard]] ResultRow result_row(const TuneReport& rep, size_t i);

}  // namespace fusetune::tune
