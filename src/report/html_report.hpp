#pragma once
// `fusetune report`'s page: one self-contained HTML file (inline CSS and SVG; no script, no
// font, image or style from anywhere else), readable offline and safe to open whatever the
// database held: every database or spec string is escaped (report/html_escape.hpp), and a
// Content-Security-Policy forbids scripts and loads even if one slipped through.
//
// Sections: the problem, environment and winner; pipeline times against the floors; bandwidth
// against the measured copy; each tunable parameter's effect; error against the bound, and the
// results that failed; the environment.
#include <cstdint>
#include <functional>
#include <string>

#include "report/report_data.hpp"

namespace fusetune::report {

struct PageOptions {
  std::string version;       // "made by fusetune VERSION"
  std::string generated_at;  // UTC, ISO 8601
  // How a parameter value reads ("layout", 1 -> "layout=nhwc"); empty: "name=value". Only the
  // part after '=' labels a value in the parameter charts.
  std::function<std::string(const std::string& name, int64_t value)> param_label;
};

// The fastest bars drawn in the pipeline-times plot; the rest are counted in a note.
inline constexpr std::size_t kMaxTimeBars = 60;

[[nodiscard]] std::string render_html(const ReportData& data, const PageOptions& options);

}  // namespace fusetune::report
