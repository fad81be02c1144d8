#pragma once
// Text from outside (a database, a dump, a spec, a file name) on its way to a terminal or into
// a one-line message. A terminal acts on control characters: an escape sequence in a GPU name
// can recolour, retitle or clear the user's terminal, a newline forges a second message line,
// a bidi override reorders what is shown. These functions make such text inert and visible.
//
//   printable("gpu\x1b[2Jname")   -> "gpu?name"    (the whole escape sequence is one '?')
//   single_line("a\nb")           -> "a b"
//   excerpt(huge_line, 60)        -> its first 60 bytes, printable, then "..."
#include <cstddef>
#include <string>
#include <string_view>

namespace fusetune::text {

// One UTF-8 sequence at the start of `s`: its code point and length, or valid = false (then
// length is 1: the offending byte). Strict: no overlong forms, surrogates or values past U+10FFFF.
struct Utf8Char {
  char32_t code = 0;
  std::size_t length = 1;
  bool valid = false;
};
[[nodiscard]] Utf8Char decode_utf8(std::string_view s);

// Whether all of `s` is strict UTF-8 (decode_utf8's rules), as strict as the JSON writer.
[[nodiscard]] bool is_valid_utf8(std::string_view s);

// Whether showing the code point itself would mislead or act on a terminal: C0 and C1
// controls, DEL, and the invisible format characters (bidi overrides and isolates, zero-width
// characters, line and paragraph separators, the BOM, tag characters).
[[nodiscard]] bool is_control_or_invisible(char32_t code);

// Every control or invisible character (above) and every byte that is not UTF-8 becomes '?';
// an escape sequence (ESC [ ... final, ESC ] ... BEL or ESC \, ESC X) becomes one '?'. Any
// other text, UTF-8 letters included, is kept as is.
[[nodiscard]] std::string printable(std::string_view text);

// printable(), except that tabs, line feeds and carriage returns become spaces: for messages
// that must stay one line ("Every error is one line").
[[nodiscard]] std::string single_line(std::string_view text);

// At most `max_bytes` of `text` (cut at a character boundary), printable, with "..." when cut.
[[nodiscard]] std::string excerpt(std::string_view text, std::size_t max_bytes = 60);

}  // namespace fusetune::text
