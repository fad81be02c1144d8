#pragma once
// The numbers behind the report's plots, worked out from ReportData before anything is drawn:
// which results are bars, where the floors and the baseline lie, the copy bandwidth of the run,
// each tunable parameter's effect. Kept apart from the drawing so tests can check the numbers.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "report/report_data.hpp"

namespace fusetune::report {

// The roofline floor: no implementation of the problem can beat max(FLOPs / peak, bytes / copy
// bandwidth). Peak rates are the H200's datasheet figures scaled by SM count, so only sm_90
// GPUs get one; `note` says how it was computed or why there is none.
struct Roofline {
  std::optional<double> ms;
  double flops = 0;
  double bytes = 0;            // input + final output, fp32
  double peak_tflops = 0;      // 0: unknown for this GPU
  std::optional<double> copy_gbps;
  std::string note;
};

// Figures per value of one tunable parameter, over the verified, timed solutions.
struct ParamValue {
  int64_t value = 0;
  double median_ms = 0;
  std::size_t count = 0;
};
struct ParamEffect {
  std::string name;
  std::vector<std::string> candidates;  // those whose variants have it
  std::vector<ParamValue> values;       // by value
  std::size_t values_left_out = 0;
};

// All pointers point into the ReportData given to analyze(), which must outlive this.
struct Figures {
  std::vector<const db::ResultRecord*> solutions;  // ok, timed, neither baseline nor floor: fastest first
  const db::ResultRecord* unfused = nullptr;       // the fastest ok baseline
  const db::ResultRecord* conv_floor = nullptr;    // the fastest ok floor (the conv alone)
  Roofline roofline;

  std::optional<double> copy_gbps;                 // the copy bandwidth measured in the run
  std::vector<const db::ResultRecord*> bandwidth;  // gbps > 0: highest first

  std::vector<ParamEffect> params;                 // parameters with >= 2 values, by name
  std::size_t params_left_out = 0;                 // ... beyond the ones charted
  std::size_t unreadable_params = 0;               // solutions whose params_json could not be read

  std::vector<const db::ResultRecord*> verified;   // ok with a worst-element ratio: worst first
  std::vector<const db::ResultRecord*> rel_l2;     // ok with a rel-L2 limit: worst (rel_l2 / limit) first
  std::vector<const db::ResultRecord*> failed;     // not ok, or ok and never timed
};

inline constexpr std::size_t kMaxParamCharts = 24;
inline constexpr std::size_t kMaxParamValues = 16;

[[nodiscard]] Figures analyze(const ReportData& data);

// Exposed for tests: the roofline of a problem on an environment under a math mode.
[[nodiscard]] Roofline roofline_floor(const spec::Problem& problem, const std::optional<db::Environment>& env,
                                      const std::string& math, std::optional<double> copy_gbps);

// A usable measurement: finite and > 0 (records may hold NaN, infinities or zero for "none").
[[nodiscard]] bool positive(double v);

}  // namespace fusetune::report
