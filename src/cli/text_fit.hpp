#pragma once
// Fitting text into a terminal's columns, for the commands' tables.
#include <string>
#include <vector>

namespace fusetune::cli {

// s in at most n bytes (n > 3), "..." marking a cut (text::excerpt: never inside a character).
[[nodiscard]] std::string cut(const std::string& s, size_t n);

// `text` in lines of at most `width` columns, broken after `sep` (the last one that fits), each
// line after the first indented by `indent` spaces.
[[nodiscard]] std::vector<std::string> wrap(const std::string& text, size_t width, size_t indent,
                                            const std::string& sep = " ");

// `text` made printable (terminal_text.hpp) and wrapped to `width` under a 9-column label
// ("problem  ...", "fixed    ..."), as lines ending in '\n': the tables' header and footer lines.
[[nodiscard]] std::string labelled_lines(const std::string& text, size_t width, const std::string& sep = " ");

}  // namespace fusetune::cli
