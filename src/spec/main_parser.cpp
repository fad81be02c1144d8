#include "spec/main_parser.hpp"

#include <bitset>
#include <cstddef>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/conv_checks.hpp"
#include "spec/ops.hpp"
#include "spec/suggest.hpp"

namespace fusetune::spec::detail {
namespace {

constexpr std::size_t kMaxKeys = 20;

struct KindName {
  MainKind kind;
  std::string_view name;
};
constexpr KindName kKinds[] = {
    {MainKind::conv2d, "conv2d"},
    {MainKind::conv3d, "conv3d"},
    {MainKind::conv_transpose2d, "conv_transpose2d"},
    {MainKind::conv_transpose3d, "conv_transpose3d"},
    {MainKind::linear, "linear"},
    {MainKind::matmul, "matmul"},
};

bool is_3d(MainKind kind) { return kind == MainKind::conv3d || kind == MainKind::conv_transpose3d; }
bool is_transposed(MainKind kind) {
  return kind == MainKind::conv_transpose2d || kind == MainKind::conv_transpose3d;
}

// The required keys, for the message that lists what is missing.
std::string required_list(MainKind kind) {
  std::vector<std::string_view> names;
  for (const MainKey& key : main_keys(kind)) {
    if (key.required) names.push_back(key.name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

bool parse_bool(TokenCursor& cur, std::string_view key) {
  if (cur.accept_ident("true")) return true;
  if (cur.accept_ident("false")) return false;
  TokenCursor::fail_expected(fmt::format("true or false for '{}'", key), cur.peek());
}

Layout parse_layout(TokenCursor& cur, std::string_view what, bool allow_any) {
  const Token& t = cur.peek();
  const auto layout = t.kind == TokKind::ident ? layout_from_name(t.text) : std::nullopt;
  if (!layout || (*layout == Layout::any && !allow_any)) TokenCursor::fail_expected(what, t);
  cur.take();
  return *layout;
}

// Sets one key of a conv kind. Tuples are written d x h x w (3-D kinds) or h x w.
void set_conv_key(TokenCursor& cur, MainKind kind, std::string_view key, Conv& c) {
  const int parts = is_3d(kind) ? 3 : 2;
  auto tuple = [&](int64_t min_value, int64_t& dd, int64_t& hh, int64_t& ww) {
    int64_t v[3] = {1, 1, 1};
    parse_tuple(cur, key, min_value, v, parts);
    if (parts == 3) {
      dd = v[0], hh = v[1], ww = v[2];
    } else {
      hh = v[0], ww = v[1];
    }
  };
  if (key == "n") c.n = parse_int(cur, key, 1);
  else if (key == "c") c.c = parse_int(cur, key, 1);
  else if (key == "d") c.d = parse_int(cur, key, 1);
  else if (key == "h") c.h = parse_int(cur, key, 1);
  else if (key == "w") c.w = parse_int(cur, key, 1);
  else if (key == "k") c.k = parse_int(cur, key, 1);
  else if (key == "t") c.t = parse_int(cur, key, 1);
  else if (key == "r") c.r = parse_int(cur, key, 1);
  else if (key == "s") c.s = parse_int(cur, key, 1);
  else if (key == "groups") c.groups = parse_int(cur, key, 1);
  else if (key == "stride") tuple(1, c.stride_d, c.stride_h, c.stride_w);
  else if (key == "pad") tuple(0, c.pad_d, c.pad_h, c.pad_w);
  else if (key == "out_pad") tuple(0, c.out_pad_d, c.out_pad_h, c.out_pad_w);
  else if (key == "dilation") tuple(1, c.dil_d, c.dil_h, c.dil_w);
  else if (key == "bias") c.bias = parse_bool(cur, key);
  else if (key == "in") c.in = parse_layout(cur, "nchw or nhwc for 'in'", false);
  else if (key == "out") c.out = parse_layout(cur, "nchw, nhwc or any for 'out'", true);
}

void set_gemm_key(TokenCursor& cur, std::string_view key, Gemm& g) {
  if (key == "batch") g.batch = parse_int(cur, key, 1);
  else if (key == "m") g.m = parse_int(cur, key, 1);
  else if (key == "k") g.k = parse_int(cur, key, 1);
  else if (key == "n") g.n = parse_int(cur, key, 1);
  else if (key == "bias") g.bias = parse_bool(cur, key);
  else if (key == "trans_a") g.trans_a = parse_bool(cur, key);
  else if (key == "trans_b") g.trans_b = parse_bool(cur, key);
}

// The first key not in `seen` with this name's index, or keys.size().
std::size_t key_index(const std::vector<MainKey>& keys, std::string_view name) {
  std::size_t i = 0;
  while (i < keys.size() && keys[i].name != name) ++i;
  return i;
}

}  // namespace

std::string_view main_name(MainKind kind) { return kKinds[static_cast<std::size_t>(kind)].name; }

const std::vector<MainKey>& main_keys(MainKind kind) {
  // conv2d's order is version 1's; `groups` is printed for conv2d only when it is not 1
  // (canonical.cpp), so version 1's canonical texts and keys stay what they were.
  static const std::vector<MainKey> conv2d = {
      {"n", true}, {"c", true}, {"h", true}, {"w", true}, {"k", true}, {"r", true}, {"s", false},
      {"stride", false}, {"pad", false}, {"dilation", false}, {"groups", false}, {"bias", false},
      {"in", false}, {"out", false}};
  static const std::vector<MainKey> conv_transpose2d = {
      {"n", true}, {"c", true}, {"h", true}, {"w", true}, {"k", true}, {"r", true}, {"s", false},
      {"stride", false}, {"pad", false}, {"out_pad", false}, {"dilation", false}, {"groups", false},
      {"bias", false}, {"in", false}, {"out", false}};
  static const std::vector<MainKey> conv3d = {
      {"n", true}, {"c", true}, {"d", true}, {"h", true}, {"w", true}, {"k", true}, {"t", false},
      {"r", true}, {"s", false}, {"stride", false}, {"pad", false}, {"dilation", false},
      {"groups", false}, {"bias", false}, {"in", false}, {"out", false}};
  static const std::vector<MainKey> conv_transpose3d = {
      {"n", true}, {"c", true}, {"d", true}, {"h", true}, {"w", true}, {"k", true}, {"t", false},
      {"r", true}, {"s", false}, {"stride", false}, {"pad", false}, {"out_pad", false},
      {"dilation", false}, {"groups", false}, {"bias", false}, {"in", false}, {"out", false}};
  static const std::vector<MainKey> linear = {{"m", true}, {"k", true}, {"n", true}, {"bias", false}};
  static const std::vector<MainKey> matmul = {{"batch", false}, {"m", true},        {"k", true},
                                              {"n", true},      {"trans_a", false}, {"trans_b", false}};
  switch (kind) {
    case MainKind::conv2d: return conv2d;
    case MainKind::conv3d: return conv3d;
    case MainKind::conv_transpose2d: return conv_transpose2d;
    case MainKind::conv_transpose3d: return conv_transpose3d;
    case MainKind::linear: return linear;
    case MainKind::matmul: return matmul;
  }
  return conv2d;
}

void parse_main(TokenCursor& cur, Problem& problem) {
  const Token& name = cur.peek();
  const KindName* found = nullptr;
  if (name.kind == TokKind::ident) {
    for (const KindName& k : kKinds) {
      if (k.name == name.text) found = &k;
    }
  }
  if (found == nullptr) {
    TokenCursor::fail_expected("a main operator (conv2d, conv3d, conv_transpose2d, conv_transpose3d, linear or "
                               "matmul) at the start of the spec",
                               name);
  }
  cur.take();
  const MainKind kind = found->kind;
  problem.main = kind;
  const std::vector<MainKey>& keys = main_keys(kind);
  std::vector<std::string_view> key_names;
  for (const MainKey& k : keys) key_names.push_back(k.name);
  const std::string key_list = fmt::format("{}", fmt::join(key_names, ", "));

  if (kind == MainKind::linear) problem.gemm.bias = true;  // nn.Linear's default
  problem.conv.transposed = is_transposed(kind);

  cur.expect(TokKind::lparen, fmt::format("'(' after {}", found->name));
  std::bitset<kMaxKeys> seen;
  if (cur.peek().kind != TokKind::rparen) {
    do {
      const Token& key = cur.peek();
      if (key.kind != TokKind::ident) TokenCursor::fail_expected(fmt::format("a {} key ({})", found->name, key_list), key);
      cur.take();
      const std::size_t index = key_index(keys, key.text);
      if (index == keys.size()) {
        const auto near = nearest_name(key.text, key_names);
        throw SpecError(key.column, fmt::format("unknown {} key {}{} (keys: {})", found->name, describe(key),
                                                near ? fmt::format("; did you mean '{}'?", *near) : "", key_list));
      }
      if (seen[index]) throw SpecError(key.column, fmt::format("duplicate key {}", describe(key)));
      seen[index] = true;
      cur.expect(TokKind::equals, fmt::format("'=' after '{}'", key.text));
      if (problem.is_conv()) {
        set_conv_key(cur, kind, key.text, problem.conv);
      } else {
        set_gemm_key(cur, key.text, problem.gemm);
      }
    } while (cur.accept(TokKind::comma));
  }
  const Token& close = cur.expect(TokKind::rparen, "',' or ')'");

  std::string missing;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].required && !seen[i]) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", keys[i].name);
  }
  if (!missing.empty()) {
    throw SpecError(close.column, fmt::format("{} is missing required key(s) {} ({} are required)", found->name,
                                              missing, required_list(kind)));
  }
  if (problem.is_conv()) {
    Conv& c = problem.conv;
    if (!seen[key_index(keys, "s")]) c.s = c.r;
    if (is_3d(kind) && !seen[key_index(keys, "t")]) c.t = c.r;
    check_conv(c, name.column, found->name);
  } else {
    check_gemm(problem.gemm, name.column, found->name);
  }
}

}  // namespace fusetune::spec::detail
