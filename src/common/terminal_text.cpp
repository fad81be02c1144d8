#include "common/terminal_text.hpp"

namespace fusetune::text {

namespace {

constexpr char kPlaceholder = '?';
constexpr unsigned char kEsc = 0x1b;
constexpr unsigned char kBel = 0x07;

unsigned char byte_at(std::string_view s, std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0; }

// The string terminator of OSC/DCS/APC/PM/SOS: BEL, ESC \ or the C1 ST (U+009C, C2 9C).
// Returns the index just past it, or the end of the text when it never comes.
std::size_t skip_control_string(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    const unsigned char b = byte_at(s, i);
    if (b == kBel) return i + 1;
    if (b == kEsc && byte_at(s, i + 1) == '\\') return i + 2;
    if (b == 0xc2 && byte_at(s, i + 1) == 0x9c) return i + 2;
    ++i;
  }
  return i;
}

// CSI parameters (0x30-0x3F), intermediates (0x20-0x2F) and the final byte (0x40-0x7E).
std::size_t skip_csi(std::string_view s, std::size_t i) {
  while (byte_at(s, i) >= 0x30 && byte_at(s, i) <= 0x3f) ++i;
  while (byte_at(s, i) >= 0x20 && byte_at(s, i) <= 0x2f) ++i;
  if (byte_at(s, i) >= 0x40 && byte_at(s, i) <= 0x7e) ++i;
  return i;
}

// `i` is just past an ESC: the index just past the whole sequence (ECMA-48).
std::size_t skip_escape(std::string_view s, std::size_t i) {
  const unsigned char next = byte_at(s, i);
  if (next == '[') return skip_csi(s, i + 1);
  if (next == ']' || next == 'P' || next == '_' || next == '^' || next == 'X') return skip_control_string(s, i + 1);
  if (next >= 0x20 && next <= 0x2f) {  // ESC ( B and the like: intermediates, then one final byte
    while (byte_at(s, i) >= 0x20 && byte_at(s, i) <= 0x2f) ++i;
    if (byte_at(s, i) >= 0x30 && byte_at(s, i) <= 0x7e) ++i;
    return i;
  }
  if (next >= 0x30 && next <= 0x7e) return i + 1;  // a two-byte sequence: ESC 7, ESC c, ...
  return i;
}

std::string sanitize(std::string_view s, bool spaces_for_line_breaks) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char b = byte_at(s, i);
    if (spaces_for_line_breaks && (b == '\n' || b == '\r' || b == '\t')) {
      out += ' ';
      ++i;
      continue;
    }
    if (b == kEsc) {
      out += kPlaceholder;
      i = skip_escape(s, i + 1);
      continue;
    }
    const Utf8Char ch = decode_utf8(s.substr(i));
    if (!ch.valid) {
      out += kPlaceholder;
      ++i;
      continue;
    }
    if (ch.code == 0x9b) {  // the C1 CSI: like ESC [
      out += kPlaceholder;
      i = skip_csi(s, i + ch.length);
      continue;
    }
    if (ch.code == 0x90 || ch.code == 0x98 || ch.code == 0x9d || ch.code == 0x9e || ch.code == 0x9f) {
      out += kPlaceholder;  // C1 DCS, SOS, OSC, PM, APC: a control string up to its terminator
      i = skip_control_string(s, i + ch.length);
      continue;
    }
    if (is_control_or_invisible(ch.code)) {
      out += kPlaceholder;
    } else {
      out.append(s.substr(i, ch.length));
    }
    i += ch.length;
  }
  return out;
}

}  // namespace

Utf8Char decode_utf8(std::string_view s) {
  const unsigned char c = byte_at(s, 0);
  if (s.empty()) return {0, 0, false};
  if (c < 0x80) return {c, 1, true};
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the first continuation byte
  char32_t code = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 1;
    code = c & 0x1fu;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 2;
    code = c & 0x0fu;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 3;
    code = c & 0x07u;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;  // nothing past U+10FFFF
  } else {
    return {c, 1, false};
  }
  if (s.size() < n + 1) return {c, 1, false};
  for (std::size_t k = 1; k <= n; ++k) {
    const unsigned char b = byte_at(s, k);
    if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xbf)) return {c, 1, false};
    code = (code << 6) | (b & 0x3fu);
  }
  return {code, n + 1, true};
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const Utf8Char u = decode_utf8(s.substr(i));
    if (!u.valid) return false;
    i += u.length;
  }
  return true;
}

bool is_control_or_invisible(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) ||  // C0, DEL, C1
         c == 0xad || c == 0x34f || c == 0x61c || c == 0x115f || c == 0x1160 || c == 0x17b4 || c == 0x17b5 ||
         (c >= 0x180b && c <= 0x180e) ||
         (c >= 0x200b && c <= 0x200f) ||  // zero-width characters, LRM, RLM
         (c >= 0x2028 && c <= 0x202e) ||  // line/paragraph separators, bidi embeddings and overrides
         (c >= 0x2060 && c <= 0x206f) ||  // word joiner, invisible operators, bidi isolates
         c == 0x3164 || (c >= 0xfe00 && c <= 0xfe0f) || c == 0xfeff || c == 0xffa0 ||
         (c >= 0xfff9 && c <= 0xfffb) || (c >= 0x1d173 && c <= 0x1d17a) ||
         (c >= 0xe0000 && c <= 0xe0fff);  // tags, variation selectors supplement
}

std::string printable(std::string_view text) { return sanitize(text, false); }

std::string single_line(std::string_view text) { return sanitize(text, true); }

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return printable(text);
  std::size_t cut = max_bytes;
  // Back up to the start of a character (at most 3 continuation bytes).
  for (int k = 0; k < 3 && cut > 0 && (byte_at(text, cut) & 0xc0u) == 0x80; ++k) --cut;
  return printable(text.substr(0, cut)) + "...";
}

}  // namespace fusetune::text
