#include "export/template_fill.hpp"

#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "export/embedded_export_templates.hpp"

namespace fusetune::exporter {
namespace {

bool placeholder_char(char ch) { return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'; }

}  // namespace

std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out;
  std::set<std::string> used;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t at = text.find('@', pos);
    if (at == std::string_view::npos) break;
    size_t end = at + 1;
    while (end < text.size() && placeholder_char(text[end])) ++end;
    if (end == at + 1 || end >= text.size() || text[end] != '@') {  // a lone '@' (a decorator): keep it
      out.append(text.substr(pos, end - pos));
      pos = end;
      continue;
    }
    const std::string name(text.substr(at + 1, end - at - 1));
    const auto it = values.find(name);
    if (it == values.end()) throw Error(ExitCode::failure, fmt::format("template placeholder @{}@ has no value", name));
    out.append(text.substr(pos, at - pos));
    out += it->second;
    used.insert(name);
    pos = end + 1;
  }
  out.append(text.substr(std::min(pos, text.size())));
  for (const auto& [name, value] : values) {
    if (!used.contains(name)) throw Error(ExitCode::failure, fmt::format("no template placeholder @{}@", name));
  }
  return out;
}

std::string_view export_template(const std::string& file_name) {
  const auto& all = embedded_export_templates();
  const auto it = all.find(file_name);
  if (it == all.end()) throw Error(ExitCode::failure, fmt::format("no export template '{}' is embedded", file_name));
  return it->second;
}

std::string without_last_newline(std::string text) {
  if (text.ends_with('\n')) text.pop_back();
  return text;
}

std::string template_block(const std::string& file_name) {
  return without_last_newline(std::string(export_template(file_name)));
}

}  // namespace fusetune::exporter
