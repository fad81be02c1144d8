#include "spec/stage_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "spec/ops.hpp"

namespace fusetune::spec::detail {
namespace {

// One argument as written: `KEY = value` or a bare value; a value is a number, a tuple
// `2x2x1`, or an identifier (true, false, channel, spatial, all).
struct RawArg {
  std::string_view key;     // empty for a positional argument
  const Token* first;       // the value's first token
  std::vector<const Token*> numbers;
  std::string_view ident;   // when the value is an identifier
};

std::vector<RawArg> read_args(TokenCursor& cur) {
  std::vector<RawArg> out;
  if (!cur.accept(TokKind::lparen)) return out;
  if (cur.peek().kind != TokKind::rparen) {
    do {
      RawArg arg;
      if (cur.peek().kind == TokKind::ident && cur.peek(1).kind == TokKind::equals) {
        arg.key = cur.take().text;
        cur.take();
      }
      arg.first = &cur.peek();
      if (cur.peek().kind == TokKind::ident) {
        arg.ident = cur.take().text;
      } else if (cur.peek().kind == TokKind::number) {
        arg.numbers.push_back(&cur.take());
        while (cur.peek().kind == TokKind::times) {
          cur.take();
          if (cur.peek().kind != TokKind::number) TokenCursor::fail_expected("a number after 'x'", cur.peek());
          arg.numbers.push_back(&cur.take());
        }
      } else {
        TokenCursor::fail_expected("a number, a name or KEY=value", cur.peek());
      }
      out.push_back(arg);
    } while (cur.accept(TokKind::comma));
  }
  cur.expect(TokKind::rparen, "',' or ')'");
  return out;
}

int64_t to_int(const Token& t, std::string_view what, int64_t min_value) {
  std::string_view text = t.text;
  if (text.front() == '+') text.remove_prefix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw SpecError(t.column, fmt::format("expected an integer for {}, found {}", what, describe(t)));
  }
  if (v < min_value || v > (int64_t{1} << 40)) {
    throw SpecError(t.column, fmt::format("{} must be in [{}, 2^40], found {}", what, min_value, t.text));
  }
  return v;
}

// A dim written as an integer (negative counts from the end, as in PyTorch).
int to_dim(const Token& t, std::size_t rank) {
  std::string_view text = t.text;
  if (text.front() == '+') text.remove_prefix(1);
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const int r = static_cast<int>(rank);
  if (ec != std::errc() || end != text.data() + text.size() || v < -r || v >= r) {
    throw SpecError(t.column, fmt::format("dim {} is out of range for a value of rank {}", t.text, rank));
  }
  return v < 0 ? v + r : v;
}

bool to_bool(const RawArg& a) {
  if (a.ident == "true") return true;
  if (a.ident == "false") return false;
  TokenCursor::fail_expected(fmt::format("true or false for '{}'", a.key), *a.first);
}

double to_double(const RawArg& a, std::string_view what) {
  if (a.numbers.size() != 1) TokenCursor::fail_expected(fmt::format("a number for {}", what), *a.first);
  return parse_double(*a.numbers[0]);
}

[[noreturn]] void unknown_key(const RawArg& a, std::string_view stage, std::string_view keys) {
  throw SpecError(a.first->column - static_cast<int>(a.key.size()) - 1,
                  fmt::format("unknown key '{}' for {} (keys: {})", a.key, stage, keys));
}

// Dims of a reduction: `channel` (1), `spatial` (2 and on), `all`, or integers; sorted, unique.
std::vector<int> read_dims(const std::vector<RawArg>& args, std::size_t rank, const Token& stage_name,
                           bool& keepdim, bool default_channel) {
  const std::string_view stage = stage_name.text;
  std::vector<int> dims;
  bool any = false;
  for (const RawArg& a : args) {
    if (a.key == "keepdim") {
      keepdim = to_bool(a);
      continue;
    }
    if (!a.key.empty()) unknown_key(a, stage, "keepdim");
    any = true;
    if (a.ident == "channel") {
      if (rank < 2) throw SpecError(a.first->column, fmt::format("'channel' is dim 1, and the value has rank {}", rank));
      dims.push_back(1);
    } else if (a.ident == "spatial") {
      if (rank < 3) throw SpecError(a.first->column, fmt::format("'spatial' is dims 2 and on, and the value has rank {}", rank));
      for (std::size_t d = 2; d < rank; ++d) dims.push_back(int(d));
    } else if (a.ident == "all") {
      for (std::size_t d = 0; d < rank; ++d) dims.push_back(int(d));
    } else if (a.numbers.size() == 1) {
      dims.push_back(to_dim(*a.numbers[0], rank));
    } else {
      TokenCursor::fail_expected("'channel', 'spatial', 'all' or a dim number", *a.first);
    }
  }
  if (!any) {
    if (!default_channel) throw SpecError(stage_name.column, fmt::format("{} needs the dims to reduce", stage));
    if (rank < 2) throw SpecError(stage_name.column, fmt::format("{} over channels needs a value of rank 2 or more", stage));
    dims.push_back(1);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

// Per-channel affine parameters of a norm, appended to the problem's parameters.
void add_affine(Stage& st, Problem& problem, const Shape& shape) {
  Shape s(shape.size(), 1);
  if (st.norm == NormKind::layer) {
    for (std::size_t i = shape.size() - std::size_t(st.norm_dims); i < shape.size(); ++i) s[i] = shape[i];
  } else {
    s[1] = shape[1];
  }
  st.weight_param = static_cast<int>(problem.param_shapes.size());
  problem.param_shapes.push_back(s);
  st.bias_param = static_cast<int>(problem.param_shapes.size());
  problem.param_shapes.push_back(s);
}

struct PoolName {
  std::string_view name;
  PoolKind kind;
  int dims;
};
constexpr PoolName kPools[] = {{"max_pool1d", PoolKind::max, 1}, {"max_pool2d", PoolKind::max, 2},
                               {"max_pool3d", PoolKind::max, 3}, {"avg_pool1d", PoolKind::avg, 1},
                               {"avg_pool2d", PoolKind::avg, 2}, {"avg_pool3d", PoolKind::avg, 3}};
constexpr std::string_view kAdaptive[] = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"};
constexpr std::string_view kNorms[] = {"batch_norm", "group_norm", "instance_norm", "layer_norm"};

Stage parse_pool(const PoolName& pn, const Token& name, const std::vector<RawArg>& args) {
  Stage st;
  st.kind = StageKind::pool;
  st.pool = pn.kind;
  st.pool_dims = pn.dims;
  const std::string_view keys = pn.kind == PoolKind::avg ? "kernel, stride, pad, count_include_pad" : "kernel, stride, pad";
  const std::string_view order[] = {"kernel", "stride", "pad"};
  bool have_kernel = false, have_stride = false;
  std::size_t positional = 0;
  for (const RawArg& a : args) {
    std::string_view key = a.key;
    if (key.empty()) {
      if (positional >= 3) throw SpecError(a.first->column, fmt::format("{} takes at most 3 positional arguments "
                                                                        "(kernel, stride, pad)", pn.name));
      key = order[positional++];
    }
    if (key == "count_include_pad" && pn.kind == PoolKind::avg) {
      st.count_include_pad = to_bool(a);
      continue;
    }
    std::array<int64_t, 3>* target = key == "kernel" ? &st.window : key == "stride" ? &st.stride : key == "pad" ? &st.pad : nullptr;
    if (target == nullptr) unknown_key(a, pn.name, keys);
    if (a.numbers.empty()) TokenCursor::fail_expected(fmt::format("an integer for '{}'", key), *a.first);
    if (a.numbers.size() != 1 && a.numbers.size() != std::size_t(pn.dims)) {
      throw SpecError(a.first->column, fmt::format("'{}' of {} takes one value or {} joined by 'x'", key, pn.name, pn.dims));
    }
    for (int i = 0; i < pn.dims; ++i) {
      const Token& t = *a.numbers[a.numbers.size() == 1 ? 0 : std::size_t(i)];
      (*target)[std::size_t(i)] = to_int(t, fmt::format("'{}'", key), key == "pad" ? 0 : 1);
    }
    if (key == "kernel") have_kernel = true;
    if (key == "stride") have_stride = true;
  }
  if (!have_kernel) throw SpecError(name.column, fmt::format("{} needs its kernel size", pn.name));
  if (!have_stride) st.stride = st.window;  // PyTorch's default stride is the kernel size
  return st;
}

Stage parse_norm(std::string_view which, const Token& name, const std::vector<RawArg>& args, const StageContext& ctx) {
  Stage st;
  st.kind = StageKind::norm;
  st.norm = which == "batch_norm" ? NormKind::batch : which == "group_norm" ? NormKind::group
                                                    : which == "instance_norm" ? NormKind::instance : NormKind::layer;
  st.affine = st.norm != NormKind::instance;  // PyTorch's defaults: InstanceNorm has affine=False
  bool have_groups = false;
  std::size_t positional = 0;
  const std::string_view keys = st.norm == NormKind::group   ? "groups, eps, affine"
                                : st.norm == NormKind::layer ? "dims, eps, affine"
                                                             : "eps, affine";
  for (const RawArg& a : args) {
    std::string_view key = a.key;
    if (key.empty()) {  // positional: groups (group_norm) or dims (layer_norm) first, then eps
      const bool sized = st.norm == NormKind::group || st.norm == NormKind::layer;
      key = positional == 0 && sized ? (st.norm == NormKind::group ? "groups" : "dims") : "eps";
      ++positional;
    }
    if (key == "eps") {
      st.eps = to_double(a, "'eps'");
      if (!(st.eps > 0.0)) throw SpecError(a.first->column, fmt::format("{} needs eps > 0", which));
    } else if (key == "affine") {
      st.affine = to_bool(a);
    } else if (key == "groups" && st.norm == NormKind::group) {
      if (a.numbers.size() != 1) TokenCursor::fail_expected("an integer for 'groups'", *a.first);
      st.groups = to_int(*a.numbers[0], "'groups'", 1);
      have_groups = true;
    } else if (key == "dims" && st.norm == NormKind::layer) {
      if (a.numbers.size() != 1) TokenCursor::fail_expected("an integer for 'dims'", *a.first);
      st.norm_dims = static_cast<int>(to_int(*a.numbers[0], "'dims'", 1));
    } else {
      unknown_key(a, which, keys);
    }
  }
  if (st.norm == NormKind::group && !have_groups) throw SpecError(name.column, "group_norm needs groups");
  // A norm that cannot apply to the shape gets no parameters here; shape_rules refuses it next.
  const bool fits = st.norm == NormKind::layer ? std::size_t(st.norm_dims) <= ctx.shape.size() : ctx.shape.size() >= 2;
  if (st.affine && fits) add_affine(st, ctx.problem, ctx.shape);
  return st;
}

}  // namespace

const std::vector<std::string_view>& general_stage_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n = {"logsumexp", "softmax", "log_softmax", "dropout"};
    for (const PoolName& p : kPools) n.push_back(p.name);
    for (std::string_view a : kAdaptive) n.push_back(a);
    for (std::string_view m : kNorms) n.push_back(m);
    return n;
  }();
  return names;
}

bool is_general_stage_name(std::string_view name) {
  const auto& names = general_stage_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string_view pool_name(const Stage& stage) {
  for (const PoolName& p : kPools) {
    if (p.kind == stage.pool && p.dims == stage.pool_dims) return p.name;
  }
  return "pool";
}

std::string_view norm_name(NormKind kind) { return kNorms[static_cast<std::size_t>(kind)]; }

std::optional<Stage> parse_general_stage(TokenCursor& cur, const Token& name, const StageContext& ctx) {
  const std::size_t rank = ctx.shape.size();
  if (const auto reduce = reduce_from_name(name.text)) {
    const auto args = read_args(cur);
    Stage st;
    st.kind = StageKind::reduce;
    st.reduce = *reduce;
    st.dims = read_dims(args, rank, name, st.keepdim, true);
    return st;
  }
  if (name.text == "logsumexp") {
    const auto args = read_args(cur);
    Stage st;
    st.kind = StageKind::logsumexp;
    if (args.empty()) throw SpecError(name.column, "logsumexp needs the dims to reduce, as in logsumexp(1)");
    st.dims = read_dims(args, rank, name, st.keepdim, false);
    return st;
  }
  if (name.text == "softmax" || name.text == "log_softmax") {
    const auto args = read_args(cur);
    Stage st;
    st.kind = name.text == "softmax" ? StageKind::softmax : StageKind::log_softmax;
    bool unused = true;
    if (args.size() != 1) throw SpecError(name.column, fmt::format("{} takes one dim, as in {}(1)", name.text, name.text));
    st.dims = read_dims(args, rank, name, unused, false);
    if (st.dims.size() != 1) throw SpecError(name.column, fmt::format("{} takes one dim", name.text));
    return st;
  }
  for (const PoolName& pn : kPools) {
    if (pn.name == name.text) return parse_pool(pn, name, read_args(cur));
  }
  for (std::size_t i = 0; i < 3; ++i) {
    if (kAdaptive[i] != name.text) continue;
    const auto args = read_args(cur);
    if (args.size() != 1 || !args[0].key.empty() || args[0].numbers.size() != 1 || args[0].numbers[0]->text != "1") {
      throw SpecError(name.column, fmt::format("{} takes the output size 1 (a mean over the last {} dims); other "
                                               "sizes are not supported",
                                               name.text, i + 1));
    }
    if (rank < i + 2) {
      throw SpecError(name.column, fmt::format("{} needs a value of rank {} or more", name.text, i + 2));
    }
    Stage st;
    st.kind = StageKind::reduce;
    st.reduce = ReduceKind::mean;
    for (std::size_t d = rank - i - 1; d < rank; ++d) st.dims.push_back(int(d));
    return st;
  }
  for (std::string_view norm : kNorms) {
    if (norm == name.text) return parse_norm(norm, name, read_args(cur), ctx);
  }
  if (name.text == "dropout") {
    throw SpecError(name.column, "dropout is random in training mode, so no kernel can be verified against it; "
                                 "in eval mode it is the identity: leave it out");
  }
  return std::nullopt;
}

}  // namespace fusetune::spec::detail
