#include "report/html_parts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "codegen/candidates.hpp"
#include "report/figures.hpp"
#include "report/html_escape.hpp"
#include "report/palette.hpp"

namespace fusetune::report::html {

namespace {
constexpr std::size_t kMaxFieldBytes = 300;
}  // namespace

std::string esc(std::string_view s) { return html_excerpt(s, kMaxFieldBytes); }
std::string name_html(std::string_view s) { return html_excerpt(s, kMaxNameBytes); }
std::string ms_text(double v) { return positive(v) ? fmt::format("{:.3f} ms", v) : "-"; }
std::string times_text(double v) { return positive(v) ? fmt::format("{:.2f}\u00d7", v) : "-"; }
std::string figure(double v, int digits) {
  return std::isfinite(v) && v >= 0 ? fmt::format("{:.{}g}", v, digits) : "-";
}
std::string count_text(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += fmt::format(" and {} more", names.size() - 3);
  return out;
}

std::string swatch(std::string_view color) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>", color);
}

std::vector<svg::LegendEntry> legend_for(const std::vector<const db::ResultRecord*>& rows) {
  std::vector<std::string> names;
  const auto present = [&](std::string_view name) {
    return std::any_of(rows.begin(), rows.end(), [&](const auto* r) { return r->candidate == name; });
  };
  for (const codegen::CandidateInfo& c : codegen::candidate_table())
    if (present(c.name)) names.emplace_back(c.name);
  for (const auto* r : rows)
    if (!codegen::candidate_from_name(r->candidate) && std::find(names.begin(), names.end(), r->candidate) == names.end())
      names.push_back(r->candidate);
  std::vector<svg::LegendEntry> out;
  for (const auto& n : names) out.push_back({n, palette::candidate_color(n)});
  return out;
}

}  // namespace fusetune::report::html
