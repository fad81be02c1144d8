#include "spec/lexer.hpp"

#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "common/terminal_text.hpp"

namespace fusetune::spec::detail {
namespace {

// Character classes by hand: <cctype> depends on the locale and is undefined for
// negative chars, and the spec language is ASCII.
bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }
bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }
bool is_alpha(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }

class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      while (i_ < s_.size() && is_space(s_[i_])) ++i_;
      const std::size_t start = i_;
      if (i_ == s_.size()) {
        out.push_back({TokKind::end, {}, column(start)});
        return out;
      }
      const char ch = s_[i_];
      if (is_alpha(ch)) {
        while (i_ < s_.size() && (is_alpha(s_[i_]) || is_digit(s_[i_]))) ++i_;
        out.push_back({TokKind::ident, s_.substr(start, i_ - start), column(start)});
      } else if (starts_number()) {
        scan_number();
        out.push_back({TokKind::number, s_.substr(start, i_ - start), column(start)});
        // `2x1` would otherwise lex as `2` and the identifier `x1`.
        if (i_ < s_.size() && s_[i_] == 'x') {
          out.push_back({TokKind::times, s_.substr(i_, 1), column(i_)});
          ++i_;
        }
      } else if (static_cast<unsigned char>(ch) >= 0x80) {
        // The whole UTF-8 character, so a message can name it; a stray byte alone.
        i_ += text::decode_utf8(s_.substr(i_)).length;
        out.push_back({TokKind::non_ascii, s_.substr(start, i_ - start), column(start)});
      } else {
        ++i_;
        out.push_back({punct_kind(ch), s_.substr(start, 1), column(start)});
      }
    }
  }

 private:
  char at(std::size_t j) const { return j < s_.size() ? s_[j] : '\0'; }
  static int column(std::size_t offset) { return static_cast<int>(offset) + 1; }

  bool starts_number() const {
    std::size_t j = i_;
    if (at(j) == '+' || at(j) == '-') ++j;
    return is_digit(at(j)) || (at(j) == '.' && is_digit(at(j + 1)));
  }

  void scan_number() {
    if (at(i_) == '+' || at(i_) == '-') ++i_;
    while (is_digit(at(i_))) ++i_;
    if (at(i_) == '.') {
      ++i_;
      while (is_digit(at(i_))) ++i_;
    }
    // The exponent only counts when digits follow, so `3e` is `3` then `e`.
    if (at(i_) == 'e' || at(i_) == 'E') {
      std::size_t j = i_ + 1;
      if (at(j) == '+' || at(j) == '-') ++j;
      if (is_digit(at(j))) {
        i_ = j;
        while (is_digit(at(i_))) ++i_;
      }
    }
  }

  static TokKind punct_kind(char ch) {
    switch (ch) {
      case '(': return TokKind::lparen;
      case ')': return TokKind::rparen;
      case '[': return TokKind::lbracket;
      case ']': return TokKind::rbracket;
      case ',': return TokKind::comma;
      case '=': return TokKind::equals;
      case '|': return TokKind::pipe;
      default: return TokKind::invalid;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::vector<Token> lex(std::string_view text) { return Scanner(text).run(); }

namespace {

// Spaces other than ASCII's: shown as a code point, since they look like ' '.
bool is_space_like(char32_t c) {
  return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x202f || c == 0x205f || c == 0x3000;
}

std::string describe_non_ascii(std::string_view bytes) {
  const text::Utf8Char ch = text::decode_utf8(bytes);
  if (!ch.valid) return fmt::format("byte 0x{:02X} (not UTF-8)", static_cast<unsigned char>(bytes[0]));
  const auto code = static_cast<uint32_t>(ch.code);
  if (text::is_control_or_invisible(ch.code) || is_space_like(ch.code))
    return fmt::format("non-ASCII character U+{:04X}", code);
  return fmt::format("non-ASCII character '{}' (U+{:04X})", bytes.substr(0, ch.length), code);
}

}  // namespace

std::string describe(const Token& token) {
  if (token.kind == TokKind::end) return "end of input";
  if (token.kind == TokKind::non_ascii) return describe_non_ascii(token.text);
  constexpr std::size_t kMaxShown = 24;
  std::string out = "'";
  for (std::size_t i = 0; i < token.text.size() && i < kMaxShown; ++i) {
    const auto byte = static_cast<unsigned char>(token.text[i]);
    if (byte >= 0x20 && byte < 0x7f) {
      out += static_cast<char>(byte);
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
  }
  if (token.text.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

}  // namespace fusetune::spec::detail
