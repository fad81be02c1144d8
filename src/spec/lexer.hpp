#pragma once
// Tokens of the spec language. Internal to the parser (not API); separate so the
// token rules (numbers, the `x` of `2x1`) are stated in one small place.
#include <string>
#include <string_view>
#include <vector>

namespace fusetune::spec::detail {

enum class TokKind {
  ident,     // [A-Za-z_][A-Za-z0-9_]*
  number,    // [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?
  times,     // an `x` written right after a number: the separator of a pair `2x1`
  lparen, rparen, lbracket, rbracket, comma, equals, pipe,
  non_ascii, // one UTF-8 character past ASCII, or one byte that is not UTF-8
  invalid,   // any other byte
  end,       // end of input
};

struct Token {
  TokKind kind;
  std::string_view text;  // points into the lexed string
  int column;             // 1-based byte column (a non-ASCII character counts its UTF-8 bytes)
};

// Splits `text` into tokens; whitespace separates tokens and is otherwise ignored.
// The last token is always `end`. Never throws on any byte sequence.
std::vector<Token> lex(std::string_view text);

// "'relu'" or "end of input", escaping non-printable bytes and shortening long tokens,
// so error messages stay one readable line whatever the input. A non_ascii token is
// "non-ASCII character 'é' (U+00E9)", "non-ASCII character U+200B" (one that would not show,
// or act on a terminal, is named by its code point only) or "byte 0xE9 (not UTF-8)".
std::string describe(const Token& token);

}  // namespace fusetune::spec::detail
