#pragma once
// The small pieces every section of `fusetune report`'s page is written with: bounded, escaped
// text from the database, figures that show "-" for what no measurement can be, the legend of a
// chart's candidates. Shared by html_report.cpp and error_section.cpp.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"
#include "report/svg_chart.hpp"

namespace fusetune::report::html {

inline constexpr int kChartWidth = 1160;  // main's content box on a 1280 px window
inline constexpr std::size_t kMaxNameBytes = 120;
inline constexpr std::size_t kMaxReasonBytes = 300;

// Every string from the database is escaped and bounded: a GPU name may be a megabyte.
[[nodiscard]] std::string esc(std::string_view s);
[[nodiscard]] std::string name_html(std::string_view s);
[[nodiscard]] std::string ms_text(double v);     // "1.234 ms", or "-"
[[nodiscard]] std::string times_text(double v);  // "2.50x", or "-"
// A figure from the database: NaN, infinities and negative values (none of which a measurement
// can be) show as "-".
[[nodiscard]] std::string figure(double v, int digits = 4);
[[nodiscard]] std::string count_text(std::size_t n, std::string_view one, std::string_view many);
// Up to three names, then how many more: raw text (the chart escapes it).
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);
[[nodiscard]] std::string swatch(std::string_view color);
// The candidates among `rows`, in the order fusetune lists them; unknown ones after.
[[nodiscard]] std::vector<svg::LegendEntry> legend_for(const std::vector<const db::ResultRecord*>& rows);

}  // namespace fusetune::report::html
