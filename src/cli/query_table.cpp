#include "cli/query_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/format.hpp"
#include "cli/table.hpp"
#include "cli/text_fit.hpp"
#include "cli/tune_table.hpp"
#include "codegen/candidates.hpp"
#include "common/bounded_json.hpp"
#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "protocol/status.hpp"

namespace fusetune::cli {

namespace {

// A result's timing round as tune's table names it: "1st", "fin", "conf"; "-" when not recorded.
std::string round_cell(const std::string& round) {
  if (round == "first pass") return "1st";
  if (round == "finalists") return "fin";
  if (round == "confirmation") return "conf";
  return "-";
}


// "2026-12-01T03:26:40.123Z" -> "2026-12-01 03:26": the minute is enough to tell runs apart.
std::string minute(const std::string& iso) {
  if (iso.size() < 16) return iso;
  std::string out = iso.substr(0, 16);
  out[10] = ' ';
  return out;
}

void add_lines(std::string& out, const std::string& s, size_t width, const std::string& sep = " ") {
  out += labelled_lines(s, width, sep);
}

}  // namespace

nlohmann::json record_params(const db::ResultRecord& r) {
  try {
    return parse_bounded(r.params_json.empty() ? "{}" : r.params_json);
  } catch (const std::exception&) {
    throw InputError(fmt::format("the stored result {} has unreadable parameters (params_json)",
                                 text::excerpt(r.variant_name, 60)));
  }
}

std::string winners_table(const std::vector<db::WinnerRecord>& winners, size_t width) {
  // Columns whose value every row shares move above the table.
  std::set<std::string> gpus, maths, sources;
  for (const auto& w : winners) {
    gpus.insert(w.env.gpu_name);
    maths.insert(w.math);
    sources.insert(w.shipped ? "shipped" : "measured");
  }
  std::string out;
  std::string shared;
  if (gpus.size() == 1) shared += "gpu " + *gpus.begin();
  if (maths.size() == 1) shared += (shared.empty() ? "" : ", ") + ("math " + *maths.begin());
  if (sources.size() == 1) shared += (shared.empty() ? "" : ", ") + *sources.begin();
  if (!shared.empty()) add_lines(out, "every    " + shared, width);

  std::vector<std::string> head{"key"};
  if (maths.size() > 1) head.push_back("math");
  if (gpus.size() > 1) head.push_back("gpu");
  for (const char* h : {"winner", "median ms", "vs unfused", "vs cudnn", "measured"}) head.push_back(h);
  if (sources.size() > 1) head.push_back("source");
  // What the fixed columns leave of the width goes to the winner's name (and the GPU's).
  const size_t fixed = 16 + 9 + 10 + 8 + 16 + 2 * (head.size() - 1) + (maths.size() > 1 ? 4 : 0) +
                       (sources.size() > 1 ? 8 : 0);
  const size_t free = width > fixed + 30 ? width - fixed : 30;
  const size_t gpu_w = gpus.size() > 1 ? std::min<size_t>(16, free / 3) : 0;
  const size_t name_w = free - gpu_w;
  Table t(head);
  for (const auto& w : winners) {
    std::vector<std::string> row{cut(w.problem_key, 16)};
    if (maths.size() > 1) row.push_back(w.math);
    if (gpus.size() > 1) row.push_back(cut(w.env.gpu_name, gpu_w));
    for (auto cell : {cut(w.variant_name, name_w), ms_cell(w.time_median_ms), speedup_cell(w.speedup_vs_unfused()),
                      speedup_cell(w.speedup_vs_cudnn()), minute(w.created_at)})
      row.push_back(cell);
    if (sources.size() > 1) row.push_back(w.shipped ? "shipped" : "measured");
    t.add(row);
  }
  out += t.render();
  // The problems once each, under the keys the table names them by.
  std::set<std::string> seen;
  for (const auto& w : winners)
    if (seen.insert(w.problem_key).second) add_lines(out, fmt::format("{}  {}", w.problem_key, w.canonical), width, " | ");
  return out;
}

std::string results_table(const std::vector<db::ResultRecord>& results, const std::vector<db::WinnerRecord>& winners,
                          const std::map<std::string, std::string>& gpu_names, size_t width) {
  std::string out;
  // Groups in the order the database gave them (newest environment first).
  std::vector<std::vector<const db::ResultRecord*>> groups;
  std::map<std::string, size_t> index;
  for (const auto& r : results) {
    const std::string g = r.problem_key + "\n" + r.math + "\n" + r.env_fingerprint;
    auto [it, fresh] = index.emplace(g, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  for (const auto& rows : groups) {
    const db::ResultRecord& first = *rows.front();
    std::string winner;
    for (const auto& w : winners)
      if (w.problem_key == first.problem_key && w.math == first.math && w.env.fingerprint() == first.env_fingerprint)
        winner = w.variant_name;
    if (!out.empty()) out += "\n";
    const auto gpu = gpu_names.find(first.env_fingerprint);
    add_lines(out, "problem  " + first.canonical, width, " | ");
    add_lines(out, fmt::format("key      {}, {}, {}; {} results", first.problem_key, first.math,
                               gpu == gpu_names.end() ? std::string("an unknown GPU") : gpu->second,
                               rows.size()),
              width);
    std::vector<nlohmann::json> params;
    std::map<std::string, std::set<std::string>> values;
    for (const auto* r : rows) {
      params.push_back(record_params(*r));
      for (const auto& [n, v] : params.back().items())
        values[n].insert(v.is_number_integer() ? param_display(n, v.get<int64_t>()) : v.dump());
    }
    std::string fixed;
    for (const auto& [n, vs] : values)
      if (vs.size() == 1) fixed += (fixed.empty() ? "" : " ") + *vs.begin();
    if (!fixed.empty()) add_lines(out, "fixed    " + fixed, width);
    const bool tf32 = first.rel_l2_limit > 0;
    constexpr size_t kFixed = 1 + 22 + 9 + 5 + 6 + 9 + 8 * 2;  // mark, status, ms, round, % copy, error, separators
    const size_t free = width > kFixed + 40 ? width - kFixed : 40;
    const size_t name_w = std::min<size_t>(38, free * 11 / 20);
    // "round": which timing round a figure comes from (first-pass figures are few samples; the
    // winner's is the confirmation round's), as tune's table shows it.
    Table t({"", "variant", "parameters", "status", "median ms", "round", "% copy", tf32 ? "err/bound" : "max err"});
    std::vector<std::string> failures;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = *rows[i];
      std::string shown;
      for (const auto& [n, v] : params[i].items()) {
        const std::string d = v.is_number_integer() ? param_display(n, v.get<int64_t>()) : n + "=" + v.dump();
        if (values[n].size() > 1) shown += (shown.empty() ? "" : " ") + d;
      }
      std::string name = r.variant_name;
      const auto role = codegen::role_of(r.candidate);
      if (role == codegen::Role::floor) name += " (floor)";
      if (role == codegen::Role::baseline) name += " (baseline)";
      const bool ok = protocol::is_status(r.status, protocol::Status::ok);
      if (!ok) failures.push_back(fmt::format("{}: {}: {}", r.variant_name, r.status, r.reason));
      t.add({r.variant_name == winner ? "*" : "", cut(name, name_w), cut(shown, free - name_w), cut(r.status, 22),
             ms_cell(ok ? r.time_median_ms : 0), round_cell(r.time_round), r.pct_copy > 0 ? fmt::format("{:.0f}%", r.pct_copy) : "-",
             !ok && !protocol::is_status(r.status, protocol::Status::wrong_result) ? "-"
             : tf32                             ? fmt::format("{:.2f}", r.worst_ratio)
                                                : fmt::format("{:.1e}", r.max_abs)});
    }
    out += t.render();
    const bool marked = std::any_of(rows.begin(), rows.end(), [&](const auto* r) { return r->variant_name == winner; });
    add_lines(out,
              winner.empty() ? "no stored winner for this environment"
              : marked       ? "* the stored winner"
                             : fmt::format("the stored winner, {}, has no result stored here", winner),
              width);
    for (const auto& f : failures) add_lines(out, f, width);
  }
  return out;
}

}  // namespace fusetune::cli
