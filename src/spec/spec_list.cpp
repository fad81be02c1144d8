#include "spec/spec_list.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "common/lines.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::spec {

namespace {

// A line that is one word of a preset's alphabet (no parenthesis, no '|'): a preset name, or a
// misspelt one, which deserves "unknown preset" rather than a spec error at column 1.
bool looks_like_a_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

std::string_view trimmed(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::vector<ListedProblem> parse_spec_list(std::string_view text, std::string_view file) {
  std::vector<ListedProblem> out;
  std::map<std::string, size_t> first_line;  // canonical form -> the line it first appeared on
  for_each_line(text, [&](size_t line_no, std::string_view line) {
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::string_view word = trimmed(line);
    if (word.empty()) return;
    const auto where = fmt::format("{}:{}", file, line_no);
    ListedProblem p;
    p.line = line_no;
    if (looks_like_a_name(word)) {
      const auto preset = preset_spec(word);
      if (!preset)
        throw InputError(fmt::format("{}: unknown preset '{}' (known: {}; or a spec: conv2d(...) | ...)", where,
                                     text::excerpt(word, 40), fmt::join(preset_names(), ", ")));
      p.problem = parse(*preset);
    } else {
      try {
        // The line as written, comment cut: the error's column is the column in the file.
        p.problem = parse(line);
      } catch (const InputError& e) {  // SpecError, with its column
        throw InputError(fmt::format("{}: {}", where, e.what()));
      }
    }
    const auto [it, fresh] = first_line.emplace(canonical(p.problem), line_no);
    if (!fresh) p.duplicate_of = it->second;
    out.push_back(std::move(p));
  });
  if (out.empty()) throw InputError(fmt::format("{}: no problems (every line is blank or a comment)", file));
  return out;
}

}  // namespace fusetune::spec
