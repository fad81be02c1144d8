#include "spec/parser.hpp"

#include <array>
#include <bitset>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/conv_checks.hpp"
#include "spec/lexer.hpp"
#include "spec/op_args.hpp"
#include "spec/ops.hpp"
#include "spec/suggest.hpp"

namespace fusetune::spec {

SpecError::SpecError(int column, const std::string& message)
    : InputError(fmt::format("spec error at column {}: {}", column, message)),
      column_(column),
      message_(message) {}

namespace {

using detail::Arg;
using detail::describe;
using detail::Token;
using detail::TokKind;

// conv2d keys, in canonical order.
enum class KeyKind { size, stride, pad, dilation, bias, in_layout, out_layout };
struct KeyDef {
  std::string_view name;
  KeyKind kind;
  bool required;
};
constexpr std::array<KeyDef, 13> kKeys = {{
    {"n", KeyKind::size, true},      {"c", KeyKind::size, true},
    {"h", KeyKind::size, true},      {"w", KeyKind::size, true},
    {"k", KeyKind::size, true},      {"r", KeyKind::size, true},
    {"s", KeyKind::size, false},     {"stride", KeyKind::stride, false},
    {"pad", KeyKind::pad, false},    {"dilation", KeyKind::dilation, false},
    {"bias", KeyKind::bias, false},  {"in", KeyKind::in_layout, false},
    {"out", KeyKind::out_layout, false},
}};
constexpr std::size_t kKeyS = 6;  // s defaults to r
static_assert(kKeys[kKeyS].name == "s");
constexpr std::string_view kKeyList = "n, c, h, w, k, r, s, stride, pad, dilation, bias, in, out";

// Recursive descent over the token list; one method per grammar rule:
//   spec     := conv ('|' stage)* END
//   conv     := 'conv2d' '(' [keyvalue (',' keyvalue)*] ')'
//   keyvalue := KEY '=' (INT | INT 'x' INT | true | false | LAYOUT)
//   stage    := NAME ['(' [arg (',' arg)*] ')']
//   arg      := NUMBER | 'param' '[' 'k' ']' | 'x' | 'channel'
class Parser {
 public:
  explicit Parser(std::string_view text) : tokens_(detail::lex(text)) {}

  Problem run() {
    // Before the grammar: `rélu` would otherwise be the unknown op 'r'.
    for (const Token& t : tokens_) {
      if (t.kind == TokKind::non_ascii)
        throw SpecError(t.column, fmt::format("{}; op names and keys are lowercase ASCII", describe(t)));
    }
    if (peek().kind == TokKind::end) throw SpecError(peek().column, "empty spec: expected conv2d(...)");
    parse_conv();
    while (accept(TokKind::pipe)) parse_stage();
    if (peek().kind != TokKind::end) fail_expected("'|' or end of input", peek());
    return std::move(problem_);
  }

 private:
  // --- token helpers ---------------------------------------------------------
  const Token& peek() const { return tokens_[pos_]; }
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

  // --- conv2d(...) -------------------------------------------------------------
  void parse_conv() {
    const Token& name = peek();
    if (name.kind != TokKind::ident || name.text != "conv2d") {
      fail_expected("conv2d(...) at the start of the spec", name);
    }
    take();
    expect(TokKind::lparen, "'(' after conv2d");
    std::bitset<kKeys.size()> seen;
    if (peek().kind != TokKind::rparen) {
      do {
        parse_key_value(seen);
      } while (accept(TokKind::comma));
    }
    const Token& close = expect(TokKind::rparen, "',' or ')'");

    std::string missing;
    for (std::size_t i = 0; i < kKeys.size(); ++i) {
      if (kKeys[i].required && !seen[i]) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", kKeys[i].name);
    }
    if (!missing.empty()) {
      throw SpecError(close.column, fmt::format("conv2d is missing required key(s) {} "
                                                "(n, c, h, w, k and r are required)",
                                                missing));
    }
    Conv& conv = problem_.conv;
    if (!seen[kKeyS]) conv.s = conv.r;
    detail::check_conv(conv, name.column);
  }

  void parse_key_value(std::bitset<kKeys.size()>& seen) {
    const Token& key = peek();
    if (key.kind != TokKind::ident) fail_expected(fmt::format("a conv2d key ({})", kKeyList), key);
    take();
    std::size_t index = 0;
    while (index < kKeys.size() && kKeys[index].name != key.text) ++index;
    if (index == kKeys.size()) {
      std::vector<std::string_view> names;
      for (const KeyDef& def : kKeys) names.push_back(def.name);
      const auto near = detail::nearest_name(key.text, names);
      throw SpecError(key.column, fmt::format("unknown conv2d key {}{} (keys: {})", describe(key),
                                              near ? fmt::format("; did you mean '{}'?", *near) : "",
                                              kKeyList));
    }
    if (seen[index]) throw SpecError(key.column, fmt::format("duplicate key {}", describe(key)));
    seen[index] = true;
    expect(TokKind::equals, fmt::format("'=' after '{}'", key.text));

    Conv& conv = problem_.conv;
    const std::string_view name = kKeys[index].name;
    switch (kKeys[index].kind) {
      case KeyKind::size: *size_field(conv, name) = parse_int(name, 1); break;
      case KeyKind::stride: parse_pair(name, 1, conv.stride_h, conv.stride_w); break;
      case KeyKind::pad: parse_pair(name, 0, conv.pad_h, conv.pad_w); break;
      case KeyKind::dilation: parse_pair(name, 1, conv.dil_h, conv.dil_w); break;
      case KeyKind::bias:
        if (accept_ident("true")) {
          conv.bias = true;
        } else if (accept_ident("false")) {
          conv.bias = false;
        } else {
          fail_expected("true or false for 'bias'", peek());
        }
        break;
      case KeyKind::in_layout: conv.in = parse_layout("nchw or nhwc for 'in'", false); break;
      case KeyKind::out_layout: conv.out = parse_layout("nchw, nhwc or any for 'out'", true); break;
    }
  }

  static int64_t* size_field(Conv& conv, std::string_view name) {
    switch (name[0]) {
      case 'n': return &conv.n;
      case 'c': return &conv.c;
      case 'h': return &conv.h;
      case 'w': return &conv.w;
      case 'k': return &conv.k;
      case 'r': return &conv.r;
      default: return &conv.s;
    }
  }

  Layout parse_layout(std::string_view what, bool allow_any) {
    const Token& t = peek();
    const auto layout = t.kind == TokKind::ident ? layout_from_name(t.text) : std::nullopt;
    if (!layout || (*layout == Layout::any && !allow_any)) fail_expected(what, t);
    take();
    return *layout;
  }

  // An integer in [min_value, kMaxTensorElems]. Larger values cannot describe a tensor
  // that passes check_conv, and the bound keeps the size arithmetic far from overflow.
  int64_t parse_int(std::string_view key, int64_t min_value) {
    const Token& t = peek();
    const std::string what = fmt::format("an integer for '{}'", key);
    if (t.kind != TokKind::number) fail_expected(what, t);
    std::string_view digits = t.text;
    if (digits.front() == '+') digits.remove_prefix(1);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (end != digits.data() + digits.size() && ec == std::errc()) fail_expected(what, t);  // 1.5, 2e3
    if (ec == std::errc::result_out_of_range || value > kMaxTensorElems) {
      if (digits.front() != '-') {
        throw SpecError(t.column, fmt::format("'{}' = {} is too large (at most 2^40)", key, t.text));
      }
      value = min_value - 1;  // a huge negative: report it as below the minimum
    } else if (ec != std::errc()) {
      fail_expected(what, t);
    }
    if (value < min_value) {
      throw SpecError(t.column, min_value == 1
                                    ? fmt::format("'{}' must be a positive integer, found {}", key, t.text)
                                    : fmt::format("'{}' must be >= 0, found {}", key, t.text));
    }
    take();
    return value;
  }

  // `2` (both dims) or `2x1` (h x w).
  void parse_pair(std::string_view key, int64_t min_value, int64_t& h, int64_t& w) {
    h = parse_int(key, min_value);
    // `2x1` lexes the x as `times`; `2 x 1` leaves it an identifier.
    if (accept(TokKind::times) || accept_ident("x")) {
      w = parse_int(key, min_value);
    } else {
      w = h;
    }
  }

  // --- epilogue stages ---------------------------------------------------------
  void parse_stage() {
    const Token& name = peek();
    if (name.kind != TokKind::ident) fail_expected("an op name after '|'", name);
    take();
    if (const auto reduce = reduce_from_name(name.text)) {
      parse_reduction(name, *reduce);
      return;
    }
    const auto kind = op_from_name(name.text);
    if (!kind) fail_unknown_op(name);

    std::vector<Arg> args;
    int close_column = name.column + static_cast<int>(name.text.size());
    if (accept(TokKind::lparen)) {
      if (peek().kind != TokKind::rparen) {
        do {
          args.push_back(parse_arg());
        } while (accept(TokKind::comma));
      }
      close_column = expect(TokKind::rparen, "',' or ')'").column;
    }
    Op op = detail::build_op(name.text, name.column, *kind, std::move(args), close_column,
                             problem_.reduce.has_value());
    (problem_.reduce ? problem_.post : problem_.pre).push_back(std::move(op));
  }

  void parse_reduction(const Token& name, ReduceKind kind) {
    if (problem_.reduce) {
      throw SpecError(name.column, fmt::format("a second reduction {}: only one channel reduction "
                                               "is allowed", describe(name)));
    }
    if (accept(TokKind::lparen)) {
      if (!accept_ident("channel") && peek().kind != TokKind::rparen) {
        fail_expected("'channel' (reductions run over the channel dimension)", peek());
      }
      expect(TokKind::rparen, "')'");
    }
    problem_.reduce = kind;
  }

  [[noreturn]] static void fail_unknown_op(const Token& name) {
    std::vector<std::string_view> names;
    for (const OpInfo& info : all_ops()) names.push_back(info.name);
    for (ReduceKind r : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
      names.push_back(reduce_name(r));
    }
    if (const auto near = detail::nearest_name(name.text, names)) {
      throw SpecError(name.column, fmt::format("unknown op {}; did you mean '{}'?", describe(name), *near));
    }
    throw SpecError(name.column, fmt::format("unknown op {} (known: {})", describe(name), fmt::join(names, ", ")));
  }

  Arg parse_arg() {
    const Token& t = peek();
    if (t.kind == TokKind::number) {
      take();
      return {Arg::Kind::number, {false, parse_double(t), -1}, t.column};
    }
    if (accept_ident("x")) return {Arg::Kind::x, {}, t.column};
    if (accept_ident("param")) {
      expect(TokKind::lbracket, "'[' after param");
      if (!accept_ident("k")) fail_expected("'k' (parameters are per output channel: param[k])", peek());
      expect(TokKind::rbracket, "']'");
      // Each occurrence is its own tensor, numbered in order of appearance.
      return {Arg::Kind::param, {true, 0.0, problem_.num_params++}, t.column};
    }
    fail_expected("a number, param[k] or x", t);
  }

  static double parse_double(const Token& t) {
    std::string_view text = t.text;
    if (text.front() == '+') text.remove_prefix(1);  // from_chars takes '-' only
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      throw SpecError(t.column, fmt::format("number {} is out of range", describe(t)));
    }
    // Scalars are applied in fp32; one that overflows fp32 would silently become inf.
    if (std::fabs(value) > double(FLT_MAX)) {
      throw SpecError(t.column, fmt::format("number {} is outside the fp32 range", describe(t)));
    }
    return value;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  Problem problem_;
};

}  // namespace

Problem parse(std::string_view text) {
  if (text.size() > kMaxSpecLength) {
    throw SpecError(static_cast<int>(kMaxSpecLength) + 1,
                    fmt::format("expected a spec of at most {} characters, found {}", kMaxSpecLength,
                                text.size()));
  }
  return Parser(text).run();
}

}  // namespace fusetune::spec
