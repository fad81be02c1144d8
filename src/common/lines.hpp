#pragma once
// The one line splitter for the text files fusetune reads (spec lists, torch-patch spec files,
// dumps), so they agree on what a line is: '\n' ends one, a '\r' before it is dropped (a file
// saved on Windows), and a UTF-8 byte order mark at the start of the text is not part of line 1
// (editors that write one are common; it is never meant as content).
#include <cstddef>
#include <string_view>

namespace fusetune {

// Calls fn(line_no, line) for every line of `text`, numbered from 1; a last line without '\n'
// counts, an empty text has none.
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++line_no, line);
  }
}

}  // namespace fusetune
