#include "report/html_escape.hpp"

#include "common/terminal_text.hpp"

namespace fusetune::report {

std::string html_escape(std::string_view text) {
  const std::string line = text::single_line(text);
  std::string out;
  out.reserve(line.size());
  for (const char c : line) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return html_escape(text);
  return html_escape(text::excerpt(text, max_bytes > 3 ? max_bytes - 3 : max_bytes));
}

}  // namespace fusetune::report
