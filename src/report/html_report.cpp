#include "report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "codegen/candidates.hpp"
#include "codegen/variant.hpp"
#include "common/terminal_text.hpp"
#include "protocol/status.hpp"
#include "report/error_section.hpp"
#include "report/figures.hpp"
#include "report/html_escape.hpp"
#include "report/html_parts.hpp"
#include "report/palette.hpp"
#include "report/svg_chart.hpp"

namespace fusetune::report {

// The pieces every section is written with (html_parts.hpp).
using html::count_text;
using html::esc;
using html::figure;
using html::join_names;
using html::kChartWidth;
using html::legend_for;
using html::ms_text;
using html::name_html;
using html::swatch;
using html::times_text;

namespace {

constexpr int kParamChartWidth = 372;

constexpr std::string_view kCss = R"css(
body{margin:0;background:#ffffff;color:#1f2933;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1160px;margin:0 auto;padding:16px 20px 32px}
h1{font-size:22px;margin:8px 0 4px}
h2{font-size:17px;margin:28px 0 6px;padding-bottom:4px;border-bottom:1px solid #d9e2ec}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px}
.spec{background:#f5f7fa;border:1px solid #e4e7eb;border-radius:4px;padding:8px 10px;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:6px 0}
th,td{text-align:left;vertical-align:top;padding:3px 12px 3px 0;border-bottom:1px solid #eef2f6}
th{font-weight:600;color:#52606d;white-space:nowrap}
td{overflow-wrap:anywhere}
.facts th{width:120px}
.winner{font-weight:600}
.note{color:#52606d;font-size:13px;margin:4px 0}
.plot{overflow-x:auto;margin:6px 0}
.grid{display:flex;flex-wrap:wrap;gap:12px 22px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:5px}
table.failed{width:100%}
table.failed td:nth-child(-n+3){white-space:nowrap;overflow-wrap:normal}
ul.lines{margin:4px 0;padding-left:18px;font-size:13px}
footer{margin-top:32px;color:#7b8794;font-size:12px}
)css";


std::string time_tooltip(const db::ResultRecord& r) {
  return fmt::format("{} ({}): median {} ms, min {}, max {}, {} runs, {}", r.variant_name, r.candidate,
                     figure(r.time_median_ms), figure(r.time_min_ms), figure(r.time_max_ms), std::max(0, r.time_count),
                     r.time_round.empty() ? "round unknown" : r.time_round);
}

std::string measured_range(const ReportData& d) {
  std::string first, last;
  for (const auto& r : d.results) {
    if (r.created_at.empty()) continue;
    if (first.empty() || r.created_at < first) first = r.created_at;
    if (last.empty() || r.created_at > last) last = r.created_at;
  }
  if (first.empty()) return "unknown";
  return first == last ? esc(first) : fmt::format("{} to {}", esc(first), esc(last));
}

std::string gpu_text(const ReportData& d) {
  if (!d.env) return "unknown";
  const auto& e = *d.env;
  return fmt::format("{} ({}, {} SMs, {} GiB)", esc(e.gpu_name), esc(e.arch()), e.sm_count > 0 ? fmt::format("{}", e.sm_count) : "-",
                     figure(std::round(double(e.mem_bytes) / double(1ll << 30)), 6));
}

std::string software_text(const ReportData& d) {
  if (!d.env) return "unknown";
  const auto& e = *d.env;
  return fmt::format("driver {}, CUDA runtime {}, NVRTC {}, cuDNN {}, templates <code>{}</code>", esc(e.driver),
                     esc(e.cuda_runtime), esc(e.nvrtc), esc(e.cudnn), esc(e.templates_hash));
}

std::string winner_text(const ReportData& d) {
  if (!d.winner) return "none stored for this environment";
  const auto& w = *d.winner;
  return fmt::format(
      "<span class=\"winner mono\">{}</span> ({}), {}: {} vs unfused ({}), {} vs the conv alone ({}){}", name_html(w.variant_name),
      esc(w.candidate), ms_text(w.time_median_ms), times_text(w.speedup_vs_unfused()), ms_text(w.unfused_median_ms),
      times_text(w.speedup_vs_cudnn()), ms_text(w.cudnn_median_ms), w.shipped ? "; shipped with fusetune" : "");
}

std::string header(const ReportData& d) {
  std::size_t ok = 0;
  for (const auto& r : d.results) ok += protocol::is_status(r.status, protocol::Status::ok);
  return fmt::format(
      "<header><h1>fusetune report</h1>\n<p class=\"spec\"><code>{}</code></p>\n<table class=\"facts\">\n"
      "<tr><th>problem key</th><td><code>{}</code></td></tr>\n"
      "<tr><th>math</th><td>{}</td></tr>\n"
      "<tr><th>GPU</th><td>{}</td></tr>\n"
      "<tr><th>software</th><td>{}</td></tr>\n"
      "<tr><th>measured</th><td>{} ({}, {} verified){}</td></tr>\n"
      "<tr><th>winner</th><td>{}</td></tr>\n</table></header>\n",
      html_escape(d.canonical), esc(d.key), esc(d.math), gpu_text(d), software_text(d), measured_range(d),
      count_text(d.results.size(), "result", "results"), ok,
      d.other_environments == 0
          ? std::string()
          : fmt::format("; not shown: {} from {} (see Environment)", count_text(d.other_results, "result", "results"),
                        count_text(d.other_environments, "other environment", "other environments")),
      winner_text(d));
}

std::string times_section(const ReportData& d, const Figures& f) {
  std::string out =
      "<section id=\"times\"><h2>Variant pipeline times, fastest first</h2>\n<p class=\"note\">Each bar is one verified "
      "variant: the median time of its whole pipeline (convolution and epilogue). The baseline and the floors are the "
      "vertical lines.</p>\n";
  if (f.solutions.empty()) return out + "<p>No verified variant with a time is stored.</p></section>\n";

  svg::Chart c;
  c.id = "times";
  c.title = "Pipeline time per variant (median)";
  c.axis_label = "pipeline time (ms)";
  c.plot_background = std::string(palette::kTimesTint);
  c.width = kChartWidth;
  const std::size_t shown = std::min(f.solutions.size(), kMaxTimeBars);
  const std::vector<const db::ResultRecord*> drawn(f.solutions.begin(), f.solutions.begin() + static_cast<std::ptrdiff_t>(shown));
  for (const auto* r : drawn) {
    const bool is_winner = d.winner && d.winner->variant_name == r->variant_name;
    c.bars.push_back({.label = r->variant_name,
                      .value = r->time_median_ms,
                      .color = palette::candidate_color(r->candidate),
                      .tooltip = time_tooltip(*r),
                      .value_text = fmt::format("{:.3f}{}", r->time_median_ms, is_winner ? " winner" : ""),
                      .note = ""});
  }
  c.legend = legend_for(drawn);

  std::string lines;
  const auto line = [&](std::string_view label, double value, std::string_view color, bool dashed, const std::string& why) {
    c.lines.push_back({fmt::format("{} {:.3f}", label, value), value, std::string(color), dashed});
    lines += fmt::format("<li>{}<b>{}</b> {}: {}</li>\n", swatch(color), label, ms_text(value), why);
  };
  if (f.unfused)
    line("unfused", f.unfused->time_median_ms, palette::kUnfused, false,
         fmt::format("the baseline, what PyTorch eager runs (<span class=\"mono\">{}</span>)", name_html(f.unfused->variant_name)));
  if (f.conv_floor)
    line("conv-alone floor", f.conv_floor->time_median_ms, palette::kConvFloor, true,
         fmt::format("the floor of any &quot;conv, then epilogue&quot; design: cuDNN&#39;s convolution alone "
                     "(<span class=\"mono\">{}</span>)",
                     name_html(f.conv_floor->variant_name)));
  if (f.roofline.ms)
    line("roofline floor", *f.roofline.ms, palette::kRoofline, true, esc(f.roofline.note));
  else
    lines += fmt::format("<li>{}</li>\n", esc(f.roofline.note));
  if (d.winner && positive(d.winner->time_median_ms))
    line("winner", d.winner->time_median_ms, palette::kWinner, false,
         fmt::format("<span class=\"mono\">{}</span>", name_html(d.winner->variant_name)));

  out += "<div class=\"plot\">" + svg::horizontal_bars(c) + "</div>\n";
  if (shown < f.solutions.size())
    out += fmt::format("<p class=\"note\">The fastest {} of {} verified variants are drawn; {} slower ones are left out.</p>\n",
                       shown, f.solutions.size(), f.solutions.size() - shown);
  return out + "<ul class=\"lines\">\n" + lines + "</ul></section>\n";
}

std::string bandwidth_section(const Figures& f) {
  std::string out =
      "<section id=\"bandwidth\"><h2>Achieved bandwidth against the copy bandwidth</h2>\n<p class=\"note\">One bar per "
      "result with a measured bandwidth (generated kernels' bytes read and written per second), highest first; the line is "
      "the copy bandwidth measured in the same run. Hover a bar for its name.</p>\n";
  if (f.bandwidth.empty()) return out + "<p>No result records an achieved bandwidth.</p></section>\n";
  svg::Chart c;
  c.id = "bandwidth";
  c.title = "Achieved bandwidth per result";
  c.axis_label = "GB/s";
  c.plot_background = std::string(palette::kBandwidthTint);
  c.width = kChartWidth;
  c.height = 300;
  const std::size_t shown = std::min(f.bandwidth.size(), svg::kMaxBars);
  const std::vector<const db::ResultRecord*> drawn(f.bandwidth.begin(), f.bandwidth.begin() + static_cast<std::ptrdiff_t>(shown));
  for (const auto* r : drawn)
    c.bars.push_back({.label = "",
                      .value = r->gbps,
                      .color = palette::candidate_color(r->candidate),
                      .tooltip = fmt::format("{} ({}): {} GB/s, {}% of copy, {}", r->variant_name, r->candidate,
                                             figure(r->gbps), figure(r->pct_copy, 3), ms_text(r->time_median_ms)),
                      .value_text = "",
                      .note = ""});
  c.legend = legend_for(drawn);
  if (f.copy_gbps) c.lines.push_back({fmt::format("copy {:.0f} GB/s", *f.copy_gbps), *f.copy_gbps, std::string(palette::kCopy), true});
  out += "<div class=\"plot\">" + svg::columns(c) + "</div>\n";
  if (!f.copy_gbps) out += "<p class=\"note\">No result says what share of the copy bandwidth it reached: no copy line.</p>\n";
  if (shown < f.bandwidth.size())
    out += fmt::format("<p class=\"note\">{} results with the lowest bandwidth are left out.</p>\n", f.bandwidth.size() - shown);
  return out + "</section>\n";
}

std::string params_section(const Figures& f, const PageOptions& o) {
  std::string out =
      "<section id=\"params\"><h2>Effect of each tunable parameter</h2>\n<p class=\"note\">For every parameter with at "
      "least two values among the verified variants: the median pipeline time of the variants with each value (n: how "
      "many).</p>\n";
  if (f.params.empty()) out += "<p>No parameter takes two or more values among the verified variants.</p>\n";
  out += "<div class=\"grid\">\n";
  for (const auto& p : f.params) {
    svg::Chart c;
    c.id = "param";
    c.title = (p.name.size() > 32 ? text::excerpt(p.name, 29) : p.name) + " (" + join_names(p.candidates) + ")";
    c.axis_label = "median ms";
    c.plot_background = std::string(palette::kParamsTint);
    c.width = kParamChartWidth;
    c.height = 210;
    for (const auto& v : p.values) {
      std::string label = o.param_label ? o.param_label(p.name, v.value) : fmt::format("{}={}", p.name, v.value);
      if (const auto eq = label.find('='); eq != std::string::npos) label = label.substr(eq + 1);
      c.bars.push_back({.label = label,
                        .value = v.median_ms,
                        .color = std::string(palette::kParamBar),
                        .tooltip = fmt::format("{} = {}: median {:.3f} ms over {}", p.name, label, v.median_ms,
                                               count_text(v.count, "variant", "variants")),
                        .value_text = fmt::format("{:.2f}", v.median_ms),
                        .note = fmt::format("n={}", v.count)});
    }
    out += svg::columns(c);
    if (p.values_left_out > 0)
      out += fmt::format("<p class=\"note\">{}: {} more values left out.</p>\n", name_html(p.name), p.values_left_out);
  }
  out += "</div>\n";
  if (f.params_left_out > 0)
    out += fmt::format("<p class=\"note\">{} more parameters are left out.</p>\n", f.params_left_out);
  if (f.unreadable_params > 0)
    out += fmt::format("<p class=\"note\">{} with unreadable parameters (params_json) are left out.</p>\n",
                       count_text(f.unreadable_params, "variant", "variants"));
  return out + "</section>\n";
}


std::string environment_section(const ReportData& d, const PageOptions& o) {
  std::string rows;
  const auto row = [&](std::string_view name, const std::string& value_html) {
    rows += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", name, value_html);
  };
  if (d.env) {
    const auto& e = *d.env;
    row("GPU", esc(e.gpu_name));
    row("compute capability", fmt::format("{}.{} ({})", e.cc_major, e.cc_minor, esc(e.arch())));
    row("SMs", e.sm_count > 0 ? fmt::format("{}", e.sm_count) : "-");
    row("memory", e.mem_bytes > 0 ? fmt::format("{} bytes ({:.1f} GiB)", e.mem_bytes, double(e.mem_bytes) / double(1ll << 30))
                                  : "-");
    row("driver (CUDA version)", esc(e.driver));
    row("CUDA runtime", esc(e.cuda_runtime));
    row("NVRTC", esc(e.nvrtc));
    row("cuDNN", esc(e.cudnn));
    row("kernel templates hash", "<code>" + esc(e.templates_hash) + "</code>");
  } else {
    row("GPU", "unknown: the environment's fingerprint could not be read");
  }
  row("fingerprint", "<code>" + html_excerpt(d.env_fingerprint, 600) + "</code>");
  row("chosen as", "the environment of " + esc(d.env_chosen_by));
  row("left out", d.other_environments == 0
                      ? std::string("nothing: no other environment holds results for this problem")
                      : fmt::format("{} of {}", count_text(d.other_results, "result", "results"),
                                    count_text(d.other_environments, "other environment", "other environments")));
  row("database", "<code>" + html_excerpt(d.db_path, 600) + "</code>");
  return fmt::format(
      "<section id=\"environment\"><h2>Environment</h2>\n<table class=\"env\">\n{}</table></section>\n"
      "<footer>made by fusetune {} at {} (UTC)</footer>\n",
      rows, esc(o.version), esc(o.generated_at));
}

}  // namespace

std::string render_html(const ReportData& d, const PageOptions& o) {
  const Figures f = analyze(d);
  std::string page = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      // Defence in depth: whatever the database held, this page runs nothing and loads nothing.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>fusetune report: {} ({})</title>\n<style>{}{}</style></head>\n<body><main>\n",
      esc(d.key), esc(d.math), kCss, svg::chart_css());
  page += header(d);
  page += times_section(d, f);
  page += bandwidth_section(f);
  page += params_section(f, o);
  page += error_section(f);
  page += environment_section(d, o);
  return page + "</main></body></html>\n";
}

}  // namespace fusetune::report
