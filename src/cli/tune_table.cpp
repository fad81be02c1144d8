#include "cli/tune_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/text_fit.hpp"
#include "common/terminal_text.hpp"
#include "protocol/status.hpp"
#include "tune/result_row.hpp"
#include "tune/tie_break.hpp"

namespace fusetune::cli {

namespace {

using codegen::Role;


std::string round_short(const protocol::VariantResult& r) {
  if (!r.timed) return "-";
  switch (r.time.round) {
    case protocol::TimeRound::first_pass: return "1st";
    case protocol::TimeRound::finalists: return "fin";
    case protocol::TimeRound::confirmation: return "conf";
  }
  return "-";
}

}  // namespace

std::string param_display(const std::string& name, int64_t value) {
  const auto layout = [&](const std::string& shown) {
    return value == 0 || value == 1 ? fmt::format("{}={}", shown, value == 0 ? "nchw" : "nhwc")
                                    : fmt::format("{}={}", shown, value);
  };
  if (name == "layout" || name == "conv_layout") return layout(name);
  if (name == "graph_in") return layout("x");
  if (name == "in_nhwc") return layout("in");
  if (name == "out_nhwc") return layout("out");
  return fmt::format("{}={}", name, value);
}

std::string tune_table(const tune::TuneReport& rep, const TuneTableOptions& opt) {
  std::string out;
  // Every line fits the width: long ones wrap, continuation lines indented under the text.
  const auto lines = [&](const std::string& s, const std::string& sep = " ") { out += labelled_lines(s, opt.width, sep); };
  // By name, so the footer lists the failures alphabetically ("1 not_supported, 1 wrong_result").
  std::map<std::string_view, size_t> by_status;
  for (const auto& r : rep.results)
    if (r.status != protocol::Status::ok) ++by_status[protocol::status_name(r.status)];
  double total_s = 0;
  std::string phases;
  for (const auto& [phase, sec] : rep.phase_seconds) {
    total_s += sec;
    if (sec >= 0.05) phases += fmt::format("{}{} {:.1f}", phases.empty() ? "" : ", ", phase, sec);
  }
  lines("problem  " + rep.problem, " | ");
  lines(fmt::format("device   {}, {}, copy {:.0f} GB/s (measured); {} variants in {:.1f} s: {}",
                    rep.device.value("name", "?"), math_mode_name(rep.math), rep.copy_gbps, rep.results.size(),
                    total_s, phases));

  // The rows: floors, baselines, then verified solutions by time (all of them with --all, and
  // failures after), the winner always.
  std::vector<size_t> rows;
  for (Role role : {Role::floor, Role::baseline}) {
    std::vector<size_t> g;
    for (size_t i = 0; i < rep.results.size(); ++i)
      if (rep.results[i].variant.role() == role) g.push_back(i);
    std::stable_sort(g.begin(), g.end(), [&](size_t a, size_t b) {
      const auto &ra = rep.results[a], &rb = rep.results[b];
      if (ra.timed != rb.timed) return ra.timed;
      return ra.time.median_ms < rb.time.median_ms;
    });
    rows.insert(rows.end(), g.begin(), g.end());
  }
  std::vector<size_t> solutions, failures;
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const auto& r = rep.results[i];
    if (r.variant.role() != Role::solution) continue;
    (r.verified && r.timed ? solutions : failures).push_back(i);
  }
  std::stable_sort(solutions.begin(), solutions.end(), [&](size_t a, size_t b) {
    if (rep.winner == a || rep.winner == b) return rep.winner == a && rep.winner != b;
    return rep.results[a].time.median_ms < rep.results[b].time.median_ms;
  });
  // A tie takes one line above the winner's: one row fewer keeps the table on a screen.
  const bool tied = rep.tie.tie && rep.winner && rep.runner_up;
  const size_t top = tied && opt.top > 1 ? opt.top - 1 : opt.top;
  const size_t shown = opt.all ? solutions.size() : std::min(solutions.size(), top);
  rows.insert(rows.end(), solutions.begin(), solutions.begin() + std::ptrdiff_t(shown));
  if (opt.all) rows.insert(rows.end(), failures.begin(), failures.end());

  // Parameters every shown row that has them agrees on: printed once.
  std::map<std::string, std::set<int64_t>> values;
  for (size_t i : rows)
    for (const auto& [n, v] : rep.results[i].variant.params) values[n].insert(v);
  std::string constant;
  for (const auto& [n, vs] : values)
    if (vs.size() == 1) constant += fmt::format("{}{}", constant.empty() ? "" : " ", param_display(n, *vs.begin()));
  if (!constant.empty()) lines(fmt::format("fixed    {}", constant));

  // Columns: mark, variant, varying parameters, ms, round, vs unfused, vs cudnn, error; the
  // variant and parameter columns share what the others leave of the width.
  const std::string err_head = rep.math == MathMode::tf32 ? "err/bound" : "max err";
  constexpr size_t kFixed = 1 + 9 + 5 + 10 + 8 + 9 + 7 * 2;  // mark, the number columns, separators
  const size_t free = opt.width > kFixed + 40 ? opt.width - kFixed : 40;
  const size_t name_w = std::min<size_t>(38, free * 11 / 20);
  const size_t param_w = free - name_w;
  Table t({"", "variant", "parameters", "median ms", "round", "vs unfused", "vs cudnn", err_head});
  const protocol::VariantResult* w = rep.winner ? &rep.results[*rep.winner] : nullptr;
  for (size_t i : rows) {
    const tune::ResultRow row = tune::result_row(rep, i);
    const auto& r = row.result;
    std::string params;
    for (const auto& [n, v] : r.variant.params)
      if (values[n].size() > 1) params += fmt::format("{}{}", params.empty() ? "" : " ", param_display(n, v));
    const char* mark = rep.winner == i ? "*" : (w && r.variant.role() != Role::floor && tune::within_noise(r, *w)) ? "~" : "";
    std::string name = r.variant.name;
    if (r.variant.role() == Role::floor) name.append(" (floor)");
    if (r.variant.role() == Role::baseline) name.append(" (baseline)");
    if (r.status != protocol::Status::ok) params = fmt::format("{} (below)", protocol::status_name(r.status));
    std::string err = "-";
    if (row.checked)
      err = rep.math == MathMode::tf32 ? fmt::format("{:.2f}", r.error.worst_ratio) : fmt::format("{:.1e}", r.error.max_abs);
    t.add({mark, cut(name, name_w), cut(params, param_w), ms_cell(r.timed ? r.time.median_ms : 0), round_short(r),
           r.variant.role() != Role::solution || !row.vs_unfused ? "-" : speedup_cell(*row.vs_unfused),
           r.variant.role() != Role::solution || !row.vs_cudnn ? "-" : speedup_cell(*row.vs_cudnn), err});
  }
  out += t.render();

  // One footer: the marks, what is not shown, what did not verify, the notes.
  // Short words: with a long problem and many fixed parameters, one wrapped line would push the
  // kernelbench-32 table past 25 lines (H200, call 19).
  std::string footer = "* winner, ~ within noise of it";
  if (!opt.all && solutions.size() > shown) footer += fmt::format("; {} more verified", solutions.size() - shown);
  std::string counts;
  for (const auto& [status, n] : by_status)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  if (!counts.empty()) footer += "; " + counts;
  if (!opt.all && !rep.notes.empty())
    footer += fmt::format("; {} note{} on cuDNN", rep.notes.size(), rep.notes.size() == 1 ? "" : "s");
  if (!opt.all && (solutions.size() > shown || !counts.empty() || !rep.notes.empty())) footer += " (--all shows them)";
  lines(footer);
  if (opt.all) {
    for (size_t i : failures)
      lines(fmt::format("{}: {}: {}", rep.results[i].variant.name, protocol::status_name(rep.results[i].status),
                        rep.results[i].reason));
    for (const auto& n : rep.notes) lines("note: " + n);
  }
  if (w && tied) {
    // Just above the winner's line, which stays the last: the runner-up it could not be told from.
    lines(fmt::format("tie      with {} ({:.3f} ms, {:.1f}% apart within {:.1f}% noise): the one with {} wins",
                      rep.results[*rep.runner_up].variant.name, rep.results[*rep.runner_up].time.median_ms,
                      100 * std::abs(rep.tie.gap), 100 * rep.tie.noise,
                      rep.tie.by == "registers" ? "fewer registers" : "the first name"));
  }
  if (w) {
    const auto round = w->time.round == protocol::TimeRound::confirmation ? std::string("confirmed")
                                                                      : std::string(protocol::time_round_name(w->time.round));
    // A shard's best is only its share's: the problem's winner is chosen after the merge.
    std::string s = fmt::format("{}{}  {:.3f} ms ({})",
                                rep.shard.whole() ? "winner   " : fmt::format("best of shard {}: ", rep.shard.text()),
                                w->variant.name, w->time.median_ms, round);
    if (rep.unfused)
      s += fmt::format("  {:.2f}x vs unfused {:.3f} ms", tune::speedup(rep, *rep.unfused, *rep.winner),
                       rep.results[*rep.unfused].time.median_ms);
    if (rep.cudnn)
      s += fmt::format("  {:.2f}x vs conv alone {:.3f} ms", tune::speedup(rep, *rep.cudnn, *rep.winner),
                       rep.results[*rep.cudnn].time.median_ms);
    lines(s);
  } else {
    lines("no verified winner");
  }
  return out;
}

}  // namespace fusetune::cli
