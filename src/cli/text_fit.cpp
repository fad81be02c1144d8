#include "cli/text_fit.hpp"

#include "common/terminal_text.hpp"

namespace fusetune::cli {

std::string cut(const std::string& s, size_t n) { return s.size() <= n ? s : text::excerpt(s, n - 3); }

std::vector<std::string> wrap(const std::string& text, size_t width, size_t indent, const std::string& sep) {
  std::vector<std::string> out;
  std::string rest = text;
  while (true) {
    const size_t room = out.empty() ? width : width - indent;
    if (rest.size() <= room) {
      out.push_back(rest);
      break;
    }
    // " |" of a " | " separator stays on the line (the next starts with "|"): it must fit too.
    const size_t keep = sep == " " ? 0 : sep.size() - 1;
    size_t at = rest.rfind(sep, room - keep);
    if (at == std::string::npos || at == 0) at = room;  // no break point: cut hard
    else at += keep;
    std::string head = rest.substr(0, at);
    while (!head.empty() && head.back() == ' ') head.pop_back();
    out.push_back(head);
    rest = rest.substr(at);
    while (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  }
  for (size_t i = 1; i < out.size(); ++i) out[i] = std::string(indent, ' ') + out[i];
  return out;
}

std::string labelled_lines(const std::string& text, size_t width, const std::string& sep) {
  std::string out;
  for (const auto& l : wrap(text::printable(text), width, 9, sep)) out += l + "\n";
  return out;
}

}  // namespace fusetune::cli
