#include "spec/parser.hpp"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/chain_form.hpp"
#include "spec/main_parser.hpp"
#include "spec/op_args.hpp"
#include "spec/ops.hpp"
#include "spec/shape_rules.hpp"
#include "spec/stage_parser.hpp"
#include "spec/suggest.hpp"
#include "spec/token_cursor.hpp"

namespace fusetune::spec {

SpecError::SpecError(int column, const std::string& message)
    : InputError(fmt::format("spec error at column {}: {}", column, message)),
      column_(column),
      message_(message) {}

namespace detail {

int64_t parse_int(TokenCursor& cur, std::string_view key, int64_t min_value) {
  const Token& t = cur.peek();
  const std::string what = fmt::format("an integer for '{}'", key);
  if (t.kind != TokKind::number) TokenCursor::fail_expected(what, t);
  std::string_view digits = t.text;
  if (digits.front() == '+') digits.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (end != digits.data() + digits.size() && ec == std::errc()) TokenCursor::fail_expected(what, t);  // 1.5, 2e3
  if (ec == std::errc::result_out_of_range || value > kMaxTensorElems) {
    if (digits.front() != '-') {
      throw SpecError(t.column, fmt::format("'{}' = {} is too large (at most 2^40)", key, t.text));
    }
    value = min_value - 1;  // a huge negative: report it as below the minimum
  } else if (ec != std::errc()) {
    TokenCursor::fail_expected(what, t);
  }
  if (value < min_value) {
    throw SpecError(t.column, min_value == 1 ? fmt::format("'{}' must be a positive integer, found {}", key, t.text)
                                             : fmt::format("'{}' must be >= 0, found {}", key, t.text));
  }
  cur.take();
  return value;
}

void parse_tuple(TokenCursor& cur, std::string_view key, int64_t min_value, int64_t* parts, int count) {
  parts[0] = parse_int(cur, key, min_value);
  int written = 1;
  // `2x1` lexes the x as `times`; `2 x 1` leaves it an identifier.
  while (written < count && (cur.accept(TokKind::times) || cur.accept_ident("x"))) {
    parts[written++] = parse_int(cur, key, min_value);
  }
  if (written == 1) {
    for (int i = 1; i < count; ++i) parts[i] = parts[0];
  } else if (written != count) {
    throw SpecError(cur.peek().column,
                    fmt::format("'{}' takes one value or {} joined by 'x', found {}", key, count, written));
  }
}

double parse_double(const Token& t) {
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

}  // namespace detail

namespace {

using detail::Arg;
using detail::describe;
using detail::Token;
using detail::TokenCursor;
using detail::TokKind;

// Recursive descent over the token list; one method per grammar rule (docs/spec-language.md):
//   spec    := main ('|' stage)* END
//   main    := MAIN '(' [keyvalue (',' keyvalue)*] ')'          (main_parser.cpp)
//   stage   := 'as' NAME | NAME ['(' [arg (',' arg)*] ')']       (general stages: stage_parser.cpp)
//   arg     := NUMBER | 'param' '[' ('k' | '1') ']' | 'x' | NAME | 'input'N | KEY '=' value
// The parser tracks the shape of the value as it goes (shape_rules.hpp), so a dim out of range,
// a pool window larger than its dim or operands that do not broadcast fail at their stage.
class Parser {
 public:
  explicit Parser(std::string_view text) : cur_(detail::lex(text)) {}

  Problem run() {
    // Before the grammar: `rélu` would otherwise be the unknown op 'r'.
    for (const Token& t : cur_.tokens()) {
      if (t.kind == TokKind::non_ascii)
        throw SpecError(t.column, fmt::format("{}; op names and keys are lowercase ASCII", describe(t)));
    }
    if (cur_.peek().kind == TokKind::end) {
      throw SpecError(cur_.peek().column, "empty spec: expected a main operator such as conv2d(...)");
    }
    detail::parse_main(cur_, problem_);
    shape_ = problem_.main_shape();
    while (cur_.accept(TokKind::pipe)) parse_stage();
    if (cur_.peek().kind != TokKind::end) TokenCursor::fail_expected("'|' or end of input", cur_.peek());
    problem_.num_params = static_cast<int>(problem_.param_shapes.size());
    problem_.num_values = static_cast<int>(value_shapes_.size());
    detail::simplify_and_lower(problem_);
    return std::move(problem_);
  }

 private:
  void parse_stage() {
    const Token& name = cur_.peek();
    if (name.kind != TokKind::ident) TokenCursor::fail_expected("an op name after '|'", name);
    cur_.take();
    if (name.text == "as") {
      parse_name();
      return;
    }
    if (const auto kind = op_from_name(name.text)) {
      parse_op(name, *kind);
      return;
    }
    detail::StageContext ctx{problem_, shape_, reduced_channels_};
    if (auto stage = detail::parse_general_stage(cur_, name, ctx)) {
      push(name, std::move(*stage));
      return;
    }
    fail_unknown_op(name);
  }

  // Appends a stage and moves the tracked shape through it.
  void push(const Token& name, Stage stage) {
    try {
      shape_ = stage_shape(problem_, stage, shape_, value_shapes_);
    } catch (const ShapeFault& fault) {
      throw SpecError(name.column, fmt::format("{}: {}", name.text, fault.what()));
    }
    if ((stage.kind == StageKind::reduce || stage.kind == StageKind::logsumexp) &&
        std::find(stage.dims.begin(), stage.dims.end(), 1) != stage.dims.end()) {
      reduced_channels_ = true;
    } else if (stage.kind == StageKind::op && shape_.size() >= 2 && shape_[1] != 1) {
      reduced_channels_ = false;  // broadcast back to all channels (`sub(y)` of a named full value)
    }
    problem_.stages.push_back(std::move(stage));
  }

  void parse_name() {
    const Token& t = cur_.peek();
    if (t.kind != TokKind::ident) TokenCursor::fail_expected("a name after 'as'", t);
    if (reserved(t.text)) {
      throw SpecError(t.column, fmt::format("{} is a reserved word; name the value something else", describe(t)));
    }
    if (names_.count(std::string(t.text)) != 0) {
      throw SpecError(t.column, fmt::format("the name {} is already used", describe(t)));
    }
    cur_.take();
    Stage st;
    st.kind = StageKind::name;
    st.value_index = static_cast<int>(value_shapes_.size());
    names_[std::string(t.text)] = st.value_index;
    value_shapes_.push_back(shape_);
    problem_.stages.push_back(std::move(st));
  }

  static bool reserved(std::string_view word) {
    if (word.rfind("input", 0) == 0) return true;
    for (std::string_view w : {"x", "param", "channel", "spatial", "all", "true", "false", "as", "k"}) {
      if (word == w) return true;
    }
    return op_from_name(word).has_value() || reduce_from_name(word).has_value() ||
           detail::is_general_stage_name(word);
  }

  void parse_op(const Token& name, OpKind kind) {
    std::vector<Arg> args;
    std::vector<int> arg_param_dims;
    int close_column = name.column + static_cast<int>(name.text.size());
    if (cur_.accept(TokKind::lparen)) {
      if (cur_.peek().kind != TokKind::rparen) {
        do {
          args.push_back(parse_arg());
        } while (cur_.accept(TokKind::comma));
      }
      close_column = cur_.expect(TokKind::rparen, "',' or ')'").column;
    }
    Op op = detail::build_op(name.text, name.column, kind, std::move(args), close_column, reduced_channels_);
    Stage st;
    st.kind = StageKind::op;
    st.op = std::move(op);
    push(name, std::move(st));
  }

  Arg parse_arg() {
    const Token& t = cur_.peek();
    if (t.kind == TokKind::number) {
      cur_.take();
      return {Arg::Kind::number, {false, detail::parse_double(t), -1}, t.column};
    }
    if (cur_.accept_ident("x")) return {Arg::Kind::x, {}, t.column};
    if (cur_.accept_ident("param")) return parse_param(t);
    if (t.kind == TokKind::ident && t.text.rfind("input", 0) == 0) return parse_input(t);
    if (t.kind == TokKind::ident) {
      const auto it = names_.find(std::string(t.text));
      if (it == names_.end()) {
        throw SpecError(t.column, fmt::format("unknown name {}: name a value first with '| as {}'", describe(t),
                                              t.text));
      }
      cur_.take();
      Operand operand;
      operand.value_index = it->second;
      return {Arg::Kind::value, operand, t.column};
    }
    TokenCursor::fail_expected("a number, param[k], a name or x", t);
  }

  // `param[k]`: a tensor along dim 1 of the value (per channel, per feature); `param[1]`: a
  // learned scalar. Each occurrence is its own tensor, numbered in order of appearance.
  Arg parse_param(const Token& t) {
    cur_.expect(TokKind::lbracket, "'[' after param");
    bool scalar = false;
    if (cur_.peek().kind == TokKind::number && cur_.peek().text == "1") {
      cur_.take();
      scalar = true;
    } else if (!cur_.accept_ident("k")) {
      TokenCursor::fail_expected("'k' (a tensor per channel: param[k]) or '1' (a learned scalar: param[1])",
                                 cur_.peek());
    }
    cur_.expect(TokKind::rbracket, "']'");
    Shape shape(shape_.size(), 1);
    if (!scalar) {
      if (shape_.size() < 2) {
        throw SpecError(t.column, fmt::format("param[k] needs a value of rank 2 or more (dim 1 is the channel), "
                                              "found {}",
                                              shape_text(shape_)));
      }
      shape[1] = shape_[1];
    }
    Operand operand{true, 0.0, static_cast<int>(problem_.param_shapes.size())};
    problem_.param_shapes.push_back(std::move(shape));
    return {Arg::Kind::param, operand, t.column, scalar};
  }

  // `input1`, `input2`, ...: extra input tensors, shaped as the value where first used.
  Arg parse_input(const Token& t) {
    const std::string_view digits = t.text.substr(5);
    int number = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || number < 1 || number > 16 ||
        digits.front() == '0') {
      throw SpecError(t.column, fmt::format("{}: extra inputs are input1 to input16", describe(t)));
    }
    cur_.take();
    const auto it = inputs_.find(number);
    Operand operand;
    if (it != inputs_.end()) {
      operand.input_index = it->second;
    } else {
      operand.input_index = static_cast<int>(problem_.input_shapes.size());
      inputs_[number] = operand.input_index;
      problem_.input_shapes.push_back(shape_);
    }
    return {Arg::Kind::input, operand, t.column};
  }

  [[noreturn]] static void fail_unknown_op(const Token& name) {
    std::vector<std::string_view> names;
    for (const OpInfo& info : all_ops()) names.push_back(info.name);
    for (ReduceKind r : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
      names.push_back(reduce_name(r));
    }
    for (std::string_view g : detail::general_stage_names()) names.push_back(g);
    if (const auto near = detail::nearest_name(name.text, names)) {
      throw SpecError(name.column, fmt::format("unknown op {}; did you mean '{}'?", describe(name), *near));
    }
    throw SpecError(name.column, fmt::format("unknown op {} (known: {})", describe(name), fmt::join(names, ", ")));
  }

  TokenCursor cur_;
  Problem problem_;
  Shape shape_;                       // of the value the next stage reads
  std::vector<Shape> value_shapes_;   // of each named value
  std::map<std::string, int> names_;  // name -> value index
  std::map<int, int> inputs_;         // inputN -> input index
  bool reduced_channels_ = false;     // a reduction over dim 1 happened
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
