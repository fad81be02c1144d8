#include "report/error_section.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "protocol/status.hpp"
#include "report/html_escape.hpp"
#include "report/html_parts.hpp"
#include "report/palette.hpp"
#include "report/svg_chart.hpp"

namespace fusetune::report {

using html::figure;
using html::kChartWidth;
using html::legend_for;
using html::name_html;

namespace {

constexpr std::size_t kMaxFailedRows = 200;

std::string failed_table(const Figures& f) {
  if (f.failed.empty()) return "<p>Every result verified and was timed.</p>\n";
  std::string out = fmt::format(
      "<h3>Results that did not verify or run ({})</h3>\n<table class=\"failed\"><tr><th>candidate</th><th>variant</th>"
      "<th>status</th><th>reason</th></tr>\n",
      f.failed.size());
  for (std::size_t i = 0; i < f.failed.size() && i < kMaxFailedRows; ++i) {
    const auto& r = *f.failed[i];
    const std::string status = protocol::is_status(r.status, protocol::Status::ok) ? "ok, not timed" : r.status;
    out += fmt::format("<tr class=\"failed-row\"><td>{}</td><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>\n",
                       name_html(r.candidate), name_html(r.variant_name), name_html(status),
                       r.reason.empty() ? "-" : html_excerpt(r.reason, html::kMaxReasonBytes));
  }
  out += "</table>\n";
  if (f.failed.size() > kMaxFailedRows)
    out += fmt::format("<p class=\"note\">{} more are left out.</p>\n", f.failed.size() - kMaxFailedRows);
  return out;
}

}  // namespace

std::string error_section(const Figures& f) {
  std::string out =
      "<section id=\"error\"><h2>Error against the bound</h2>\n<p class=\"note\">Per verified result, worst first: the "
      "worst element's error over its tolerance (at most 1 passes).</p>\n";
  const bool any_ratio = std::any_of(f.verified.begin(), f.verified.end(), [](const auto* r) { return r->worst_ratio > 0; });
  if (!any_ratio) {
    out += "<p>These results carry no per-element error ratio.</p>\n";
  } else {
    svg::Chart c;
    c.id = "error";
    c.title = "Worst element's error / tolerance";
    c.axis_label = "error / tolerance";
    c.plot_background = std::string(palette::kErrorTint);
    c.width = kChartWidth;
    const std::size_t shown = std::min(f.verified.size(), svg::kMaxBars);
    const std::vector<const db::ResultRecord*> drawn(f.verified.begin(), f.verified.begin() + static_cast<std::ptrdiff_t>(shown));
    for (const auto* r : drawn)
      c.bars.push_back({.label = "",
                        .value = r->worst_ratio,
                        .color = palette::candidate_color(r->candidate),
                        .tooltip = fmt::format("{} ({}): worst ratio {}, max abs error {}, max rel error {}",
                                               r->variant_name, r->candidate, figure(r->worst_ratio, 3),
                                               figure(r->max_abs, 3), figure(r->max_rel, 3)),
                        .value_text = "",
                        .note = ""});
    c.legend = legend_for(drawn);
    c.lines.push_back({"bound 1", 1.0, std::string(palette::kBound), true});
    out += "<div class=\"plot\">" + svg::columns(c) + "</div>\n";
    if (shown < f.verified.size())
      out += fmt::format("<p class=\"note\">{} results with the smallest ratio are left out.</p>\n", f.verified.size() - shown);
  }

  if (!f.rel_l2.empty()) {
    double lo = f.rel_l2.front()->rel_l2_limit, hi = lo;
    for (const auto* r : f.rel_l2) {
      lo = std::min(lo, r->rel_l2_limit);
      hi = std::max(hi, r->rel_l2_limit);
    }
    svg::Chart c;
    c.id = "rel-l2";
    c.title = lo == hi ? fmt::format("Relative L2 error / its limit ({:.3g})", lo)
                       : fmt::format("Relative L2 error / its limit ({:.3g} to {:.3g})", lo, hi);
    c.axis_label = "rel-L2 / limit";
    c.plot_background = std::string(palette::kRelL2Tint);
    c.width = kChartWidth;
    c.height = 220;
    const std::size_t shown = std::min(f.rel_l2.size(), svg::kMaxBars);
    const std::vector<const db::ResultRecord*> drawn(f.rel_l2.begin(), f.rel_l2.begin() + static_cast<std::ptrdiff_t>(shown));
    for (const auto* r : drawn)
      c.bars.push_back({.label = "",
                        .value = r->rel_l2 / r->rel_l2_limit,
                        .color = palette::candidate_color(r->candidate),
                        .tooltip = fmt::format("{} ({}): rel-L2 {}, limit {}", r->variant_name, r->candidate,
                                               figure(r->rel_l2, 3), figure(r->rel_l2_limit, 3)),
                        .value_text = "",
                        .note = ""});
    c.legend = legend_for(drawn);
    c.lines.push_back({"limit 1", 1.0, std::string(palette::kBound), true});
    out += "<div class=\"plot\">" + svg::columns(c) + "</div>\n";
  }
  return out + failed_table(f) + "</section>\n";
}

}  // namespace fusetune::report
