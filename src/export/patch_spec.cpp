#include "export/patch_spec.hpp"

#include <map>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/lines.hpp"

namespace fusetune::exporter {

std::vector<SpecBlock> read_patch_spec(std::string_view text, std::string_view file) {
  const auto listed = spec::parse_spec_list(text, file);
  std::map<size_t, std::string> records;  // line of the spec it follows -> record
  size_t last_spec = 0, next = 0;
  // The same splitter as parse_spec_list, so line numbers agree.
  for_each_line(text, [&](size_t line_no, std::string_view line) {
    if (next < listed.size() && listed[next].line == line_no) {
      last_spec = line_no;
      ++next;
      return;
    }
    const size_t b = line.find_first_not_of(" \t");
    constexpr std::string_view kMarker = "#@block ";
    if (b == std::string_view::npos || line.substr(b, kMarker.size()) != kMarker) return;
    if (last_spec == 0)
      throw InputError(fmt::format("{}:{}: a #@block record before any spec line", file, line_no));
    if (!records.emplace(last_spec, std::string(line.substr(b + kMarker.size()))).second)
      throw InputError(fmt::format("{}:{}: a second #@block record for the spec of line {}", file, line_no, last_spec));
  });
  std::vector<SpecBlock> out;
  for (const auto& p : listed) {
    const auto it = records.find(p.line);
    if (it == records.end())
      throw InputError(fmt::format("{}:{}: no #@block record after this spec: torch-patch needs to know where each "
                                   "block sits in the model, as `fusetune from-torch` writes it",
                                   file, p.line));
    out.push_back({p, it->second});
  }
  return out;
}

}  // namespace fusetune::exporter
