#pragma once
// A read position in the token list, with the helpers every grammar rule uses. Internal to
// the parser; shared by the main-operator and the stage rules (main_parser.cpp,
// stage_parser.cpp, parser.cpp).
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "spec/lexer.hpp"
#include "spec/parser.hpp"

namespace fusetune::spec::detail {

class TokenCursor {
 public:
  explicit TokenCursor(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  [[nodiscard]] const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& take() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokKind::end) ++pos_;
    return t;
  }
  bool accept(TokKind kind) {
    if (peek().kind != kind) return false;
    take();
    return true;
  }
  bool accept_ident(std::string_view text) {
    if (peek().kind != TokKind::ident || peek().text != text) return false;
    take();
    return true;
  }
  const Token& expect(TokKind kind, std::string_view what) {
    if (peek().kind != kind) fail_expected(what, peek());
    return take();
  }
  [[noreturn]] static void fail_expected(std::string_view what, const Token& found) {
    throw SpecError(found.column, fmt::format("expected {}, found {}", what, describe(found)));
  }
  [[nodiscard]] const std::vector<Token>& tokens() const { return tokens_; }

 private:
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// An integer in [min_value, kMaxTensorElems] for `key` (parser.cpp); the bound keeps every
// size product far from overflow.
int64_t parse_int(TokenCursor& cur, std::string_view key, int64_t min_value);

// `2`, or `2x1` (pair), or `2x1x1` (triple, when count is 3): fills parts[0..count) with
// one value each, or every part with the single value written.
void parse_tuple(TokenCursor& cur, std::string_view key, int64_t min_value, int64_t* parts, int count);

// A scalar in the fp32 range.
double parse_double(const Token& t);

}  // namespace fusetune::spec::detail
