#pragma once
// Small SVG bar charts for the HTML report: a labelled horizontal bar chart (one row per
// variant, reference lines across) and a column chart (one column per result, reference lines
// along). Plain SVG 1.1 with no script, no external reference and no text measured by a
// browser: the page must look the same in any viewer and stay inert.
//
// Everything textual (labels, tooltips) is raw text and escaped here; colors come from code and
// are checked. A bar whose value is not finite or negative is not drawn, and the number of bars
// and the length of every label are bounded, so no database can make the SVG invalid or huge.
//
// The drawing is exact on purpose: integer coordinates and shape-rendering="crispEdges", bars
// at least 3 px apart, each plot area filled with its own tint. tests/report_screenshot.py
// finds a plot by its tint and counts the bars in a pixel column of the screenshot.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fusetune::report::svg {

struct Bar {
  std::string label;       // row label (horizontal) or tick label under the column ("" = none)
  double value = 0;        // in the axis unit; not finite or < 0: skipped
  std::string color;       // "#rrggbb"
  std::string tooltip;     // shown by the viewer on hover (<title>)
  std::string value_text;  // written at the end of the bar ("" = none)
  std::string note;        // columns: a second, smaller line under the label ("n=12")
};

struct RefLine {
  std::string label;  // drawn at the line with its value
  double value = 0;   // not finite or < 0: skipped
  std::string color;  // "#rrggbb"
  bool dashed = false;
};

struct LegendEntry {
  std::string label;
  std::string color;
};

struct Chart {
  std::string id;          // data-plot="..." on the <svg>, for tests and the screenshot check
  std::string title;
  std::string axis_label;  // the value axis: "pipeline time (ms)"
  std::vector<Bar> bars;
  std::vector<RefLine> lines;
  std::vector<LegendEntry> legend;
  std::string plot_background = "#ffffff";  // a tint used by no other plot on the page
  int width = 1160;                         // px; clamped to [240, 4000]
  int height = 260;                         // column charts only; clamped to [120, 2000]
};

// The charts' text styles, for the page's <style> (class names are scoped to svg.chart).
[[nodiscard]] std::string_view chart_css();

// The most bars a chart draws; callers leave out the rest and say so.
inline constexpr std::size_t kMaxBars = 400;

// One row per bar, in the given order, label on the left, value text at the bar's end,
// reference lines as vertical lines with their labels above the plot.
[[nodiscard]] std::string horizontal_bars(const Chart& chart);

// One column per bar, in the given order; labels under the columns when they fit, reference
// lines as horizontal lines labelled at the right.
[[nodiscard]] std::string columns(const Chart& chart);

// The value axis: 0 to a round maximum covering `max_value`, with ticks at 1, 2 or 5 x 10^k.
struct Scale {
  double max = 1;
  std::vector<double> ticks;
};
[[nodiscard]] Scale nice_scale(double max_value, int target_ticks = 6);

// A number for a tick or a value label: few digits, no exponent below 1e6.
[[nodiscard]] std::string format_number(double v, double step);

}  // namespace fusetune::report::svg
