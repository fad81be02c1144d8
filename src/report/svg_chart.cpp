#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "report/html_escape.hpp"

namespace fusetune::report::svg {

namespace {

// Text is not measured (no browser runs here): widths are estimated from the character count
// with the fonts' average advances at 11 px, generously, so labels never overrun.
constexpr double kMonoChar = 6.7;  // monospace, 11 px
constexpr double kSansChar = 6.4;  // sans-serif, 11 px
constexpr std::size_t kMaxLabelBytes = 56;
constexpr std::size_t kMaxLegendEntries = 12;
constexpr std::size_t kMaxLines = 16;
constexpr int kTitleY = 18;

bool drawable(double v) { return std::isfinite(v) && v >= 0; }

// Colors come from code; anything else (a bug) is drawn grey rather than pasted into markup.
std::string checked_color(const std::string& c) {
  const bool ok = c.size() == 7 && c[0] == '#' &&
                  std::all_of(c.begin() + 1, c.end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)); });
  return ok ? c : "#888888";
}

int text_px(std::string_view text, double per_char) {
  return static_cast<int>(std::ceil(static_cast<double>(std::min(text.size(), kMaxLabelBytes + 3)) * per_char));
}

// The position of `v` on an axis of `length` px whose end is `max`.
int along(double v, double max, int length) {
  if (!(max > 0)) return 0;
  return static_cast<int>(std::lround(std::clamp(v / max, 0.0, 1.0) * length));
}

std::vector<Bar> drawable_bars(const std::vector<Bar>& bars) {
  std::vector<Bar> out;
  for (const auto& b : bars) {
    if (out.size() == kMaxBars) break;
    if (drawable(b.value)) out.push_back(b);
  }
  return out;
}

std::vector<RefLine> drawable_lines(const std::vector<RefLine>& lines) {
  std::vector<RefLine> out;
  for (const auto& l : lines)
    if (drawable(l.value) && out.size() < kMaxLines) out.push_back(l);
  return out;
}

double largest(const std::vector<Bar>& bars, const std::vector<RefLine>& lines) {
  double m = 0;
  for (const auto& b : bars) m = std::max(m, b.value);
  for (const auto& l : lines) m = std::max(m, l.value);
  return m;
}

std::string svg_open(const Chart& c, int width, int height, std::size_t bars) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-plot=\"{}\" data-bars=\"{}\" "
      "data-plot-bg=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\"><text class=\"t\" x=\"4\" y=\"{}\">{}</text>\n",
      html_excerpt(c.id, 40), bars, checked_color(c.plot_background), width, height, width, height,
      html_excerpt(c.title, 200), kTitleY, html_excerpt(c.title, 200));
}

// Swatches and names in rows under the title; returns the y below the last row.
int legend(const Chart& c, int width, int y, std::string& out) {
  if (c.legend.empty()) return y;
  int x = 4;
  y += 16;
  for (std::size_t i = 0; i < c.legend.size() && i < kMaxLegendEntries; ++i) {
    const auto& e = c.legend[i];
    const int w = 16 + text_px(e.label.substr(0, 32), kSansChar) + 18;
    if (x > 4 && x + w > width) {
      x = 4;
      y += 16;
    }
    out += fmt::format("<rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
                       "<text class=\"a\" x=\"{}\" y=\"{}\">{}</text>\n",
                       x, y - 9, checked_color(e.color), x + 14, y, html_excerpt(e.label, 32));
    x += w;
  }
  return y + 6;
}

std::string tooltip(const Bar& b) { return b.tooltip.empty() ? "" : "<title>" + html_excerpt(b.tooltip, 400) + "</title>"; }

}  // namespace

std::string_view chart_css() {
  return "svg.chart .t{font:600 14px system-ui,sans-serif;fill:#1f2933}\n"
         "svg.chart .a{font:11px system-ui,sans-serif;fill:#52606d}\n"
         "svg.chart .l{font:11px ui-monospace,'DejaVu Sans Mono',monospace;fill:#1f2933}\n"
         "svg.chart .v{font:11px system-ui,sans-serif;fill:#3e4c59}\n"
         "svg.chart .r{font:600 11px system-ui,sans-serif}\n";
}

Scale nice_scale(double max_value, int target_ticks) {
  Scale s;
  if (!std::isfinite(max_value) || max_value <= 0) max_value = 1;
  const double raw = max_value / std::max(1, target_ticks - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  s.max = std::ceil(max_value / step) * step;
  if (!std::isfinite(s.max)) {  // rounding up past the largest double
    s.max = max_value;
    s.ticks = {0.0, max_value};
    return s;
  }
  for (int i = 0; i <= 20; ++i) {
    const double t = i * step;
    if (t > s.max * (1 + 1e-9)) break;
    s.ticks.push_back(t);
  }
  return s;
}

std::string format_number(double v, double step) {
  if (!std::isfinite(v)) return "-";
  if (std::abs(v) >= 1e6) return fmt::format("{:.3g}", v);
  // As many decimals as the step needs (2.5 needs one), at most six.
  int decimals = 0;
  if (std::isfinite(step) && step > 0)
    while (decimals < 6 && std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6)
      ++decimals;
  return fmt::format("{:.{}f}", v, decimals);
}

std::string horizontal_bars(const Chart& c) {
  constexpr int kBarH = 12, kPitch = 18, kPad = 8, kRight = 96, kLineRow = 14;
  const int width = std::clamp(c.width, 240, 4000);
  const auto bars = drawable_bars(c.bars);
  const auto lines = drawable_lines(c.lines);
  const Scale scale = nice_scale(largest(bars, lines));

  int label_w = 0;
  for (const auto& b : bars) label_w = std::max(label_w, text_px(b.label, kMonoChar));
  const int x0 = std::clamp(label_w + 14, 60, width / 2);
  const int w = width - x0 - kRight;

  std::string body;
  int y = legend(c, width, kTitleY, body) + 6;

  // Reference line labels above the plot, in rows, each joined to its line by the line itself
  // running up to it. A label starts just right of its line, so placing them from the rightmost
  // line leftwards in the lowest row that is free (no label there, no line running up through
  // it, and nothing below it crossing this line's way up) stacks them like stairs without one
  // line striking through another's label.
  struct Placed {
    int x = 0, row = 0, left = 0, right = 0;
  };
  constexpr int kMaxRows = 6;
  std::vector<Placed> placed(lines.size());
  std::vector<std::size_t> order(lines.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto x_of = [&](std::size_t i) { return x0 + along(lines[i].value, scale.max, w); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x_of(a) > x_of(b); });
  int rows = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    Placed me;
    me.x = x_of(order[k]);
    const int tw = text_px(lines[order[k]].label, kSansChar) + 4;
    me.left = me.x + 4;
    if (me.left + tw > width) me.left = std::max(0, me.x - 4 - tw);  // at the right edge: left of the line
    me.right = me.left + tw;
    for (me.row = 0; me.row < kMaxRows - 1; ++me.row) {
      const bool clash = std::any_of(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), [&](std::size_t j) {
        const Placed& p = placed[j];
        if (p.row == me.row) return me.left < p.right + 6 && p.left < me.right + 6;
        if (p.row > me.row) return p.x >= me.left - 3 && p.x <= me.right + 3;
        return me.x >= p.left - 3 && me.x <= p.right + 3;
      });
      if (!clash) break;
    }
    placed[order[k]] = me;
    rows = std::max(rows, me.row + 1);
  }
  const int y0 = y + rows * kLineRow + 6;
  const int h = static_cast<int>(bars.size()) * kPitch - (kPitch - kBarH) + 2 * kPad;
  const int height = y0 + h + 40;

  std::string out = svg_open(c, width, height, bars.size()) + body;
  out += fmt::format("<g shape-rendering=\"crispEdges\"><rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" "
                     "height=\"{}\" fill=\"{}\"/>\n",
                     x0, y0, w, h, checked_color(c.plot_background));
  const double step = scale.ticks.size() > 1 ? scale.ticks[1] : scale.max;
  for (double t : scale.ticks) {
    const int tx = x0 + along(t, scale.max, w);
    // No grid line at 0: the column just right of the plot's left edge crosses only bars.
    if (t > 0) out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"1\" height=\"{}\" fill=\"#dde3ea\"/>\n", tx, y0, h);
    out += fmt::format("<text class=\"a\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", tx, y0 + h + 14,
                       format_number(t, step));
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const int by = y0 + kPad + static_cast<int>(i) * kPitch;
    const int bw = std::max(3, along(b.value, scale.max, w));
    out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>"
                       "<text class=\"l\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                       x0, by, bw, kBarH, checked_color(b.color), tooltip(b), x0 - 6, by + kBarH - 2,
                       html_excerpt(b.label, kMaxLabelBytes));
    if (!b.value_text.empty())
      out += fmt::format("<text class=\"v\" x=\"{}\" y=\"{}\">{}</text>", x0 + bw + 4, by + kBarH - 2,
                         html_excerpt(b.value_text, 24));
    out += "\n";
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const int lx = x0 + along(l.value, scale.max, w);
    const int ly = y0 - 6 - placed[i].row * kLineRow;
    const std::string color = checked_color(l.color);
    out += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
                       "<text class=\"r\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n",
                       lx, ly - 9, lx, y0 + h, color, l.dashed ? " stroke-dasharray=\"6 4\"" : "",
                       placed[i].left, ly, color, html_excerpt(l.label, kMaxLabelBytes));
  }
  out += "</g>";
  out += fmt::format("<text class=\"a\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x0 + w / 2,
                     y0 + h + 32, html_excerpt(c.axis_label, 120));
  return out + "</svg>\n";
}

std::string columns(const Chart& c) {
  constexpr int kLeft = 64, kRight = 12;
  const int width = std::clamp(c.width, 240, 4000);
  const int height = std::clamp(c.height, 120, 2000);
  const auto bars = drawable_bars(c.bars);
  const auto lines = drawable_lines(c.lines);
  const Scale scale = nice_scale(largest(bars, lines) * 1.04);

  const int w = width - kLeft - kRight;
  const double slot = bars.empty() ? w : static_cast<double>(w) / static_cast<double>(bars.size());
  const int gap = std::max(1, static_cast<int>(slot * 0.25));
  const int bar_w = std::clamp(static_cast<int>(slot) - gap, 1, 56);
  // Labels under the columns: level when every one fits its slot, else slanted (cut short)
  // when a slot is at least a line of text wide, else none (the tooltips still name them).
  constexpr std::size_t kSlantedBytes = 16;
  int label_px = 0, note_px = 0;
  for (const auto& b : bars) {
    label_px = std::max(label_px, text_px(b.label, kSansChar));
    note_px = std::max(note_px, text_px(b.note, kSansChar));
  }
  const int room = static_cast<int>(slot) - 2;
  const bool slanted = label_px > room;
  const bool labels = label_px > 0 && (!slanted || slot >= 12);
  const bool notes = note_px > 0 && note_px <= room;
  const int slanted_px = static_cast<int>(std::min(label_px, text_px(std::string(kSlantedBytes + 3, 'x'), kSansChar)) * 0.71);
  const int label_drop = !labels ? 0 : slanted ? slanted_px + 12 : 13;

  std::string body;
  const int y0 = legend(c, width, kTitleY, body) + 16;
  const int bottom = 10 + label_drop + (notes ? 13 : 0);
  const int h = std::max(60, height - y0 - bottom);
  const int full_height = y0 + h + bottom;

  std::string out = svg_open(c, width, full_height, bars.size()) + body;
  out += fmt::format("<g shape-rendering=\"crispEdges\"><rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" "
                     "height=\"{}\" fill=\"{}\"/>\n",
                     kLeft, y0, w, h, checked_color(c.plot_background));
  const double step = scale.ticks.size() > 1 ? scale.ticks[1] : scale.max;
  for (double t : scale.ticks) {
    const int ty = y0 + h - along(t, scale.max, h);
    if (t > 0) out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"1\" fill=\"#dde3ea\"/>\n", kLeft, ty, w);
    out += fmt::format("<text class=\"a\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, ty + 4,
                       format_number(t, step));
  }
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const int left = kLeft + static_cast<int>(std::floor(static_cast<double>(i) * slot));
    const int bx = left + std::max(0, (static_cast<int>(slot) - bar_w) / 2);
    const int bh = std::max(1, along(b.value, scale.max, h));
    out += fmt::format("<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>", bx,
                       y0 + h - bh, bar_w, bh, checked_color(b.color), tooltip(b));
    const int cx = bx + bar_w / 2;
    if (!b.value_text.empty() && text_px(b.value_text, kSansChar) <= static_cast<int>(slot))
      out += fmt::format("<text class=\"v\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", cx,
                         y0 + h - bh - 3, html_excerpt(b.value_text, 24));
    // Level: the label, then the note under it. Slanted: the note first, the label hanging below.
    const int note_y = y0 + h + (labels && !slanted ? 26 : 13);
    if (notes)
      out += fmt::format("<text class=\"a\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", cx, note_y,
                         html_excerpt(b.note, kMaxLabelBytes));
    if (labels && !slanted)
      out += fmt::format("<text class=\"a\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>", cx, y0 + h + 13,
                         html_excerpt(b.label, kMaxLabelBytes));
    if (labels && slanted) {
      const int ly = y0 + h + (notes ? 13 : 0) + 12;
      out += fmt::format("<text class=\"a\" x=\"{0}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-45 {0} {1})\">{2}</text>",
                         cx + 3, ly, html_excerpt(b.label, kSlantedBytes));
    }
    out += "\n";
  }
  // Labels at the right end, above their line; one that would cover the previous shifts left.
  int prev_y = -100, prev_left = kLeft + w;
  for (const auto& l : lines) {
    const int ly = y0 + h - along(l.value, scale.max, h);
    const std::string color = checked_color(l.color);
    int right = kLeft + w - 4;
    if (std::abs(ly - prev_y) < 13) right = prev_left - 12;
    const int tw = text_px(l.label, kSansChar);
    out += fmt::format("<line class=\"ref\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
                       "<text class=\"r\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{}</text>\n",
                       kLeft, ly, kLeft + w, ly, color, l.dashed ? " stroke-dasharray=\"6 4\"" : "", right,
                       std::max(y0 + 10, ly - 4), color, html_excerpt(l.label, kMaxLabelBytes));
    prev_y = ly;
    prev_left = right - tw;
  }
  out += "</g>";
  out += fmt::format("<text class=\"a\" transform=\"rotate(-90 12 {0})\" x=\"12\" y=\"{0}\" text-anchor=\"middle\">{1}</text>\n",
                     y0 + h / 2, html_excerpt(c.axis_label, 80));
  return out + "</svg>\n";
}

}  // namespace fusetune::report::svg
