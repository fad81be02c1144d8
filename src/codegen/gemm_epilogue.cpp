#include "codegen/gemm_epilogue.hpp"

#include <fmt/format.h>

#include "codegen/chain_simplify.hpp"
#include "codegen/stage_source.hpp"

namespace fusetune::codegen {

namespace {

using spec::StageKind;

// Whether every operand of `op` is one this part of the chain can read: a scalar, a per-feature
// parameter (before the reduction), or a value named earlier in the same part.
bool operands_ok(const spec::Op& op, const std::vector<bool>& named_here, bool params_ok) {
  for (const spec::Operand& a : op.args) {
    if (a.input_index >= 0) return false;
    if (a.value_index >= 0 && (size_t(a.value_index) >= named_here.size() || !named_here[size_t(a.value_index)]))
      return false;
    if (a.per_channel && !params_ok) return false;
  }
  return true;
}

GemmReduce reduce_of(spec::ReduceKind k) {
  switch (k) {
    case spec::ReduceKind::min: return GemmReduce::min;
    case spec::ReduceKind::max: return GemmReduce::max;
    case spec::ReduceKind::sum: return GemmReduce::sum;
    case spec::ReduceKind::mean: return GemmReduce::mean;
  }
  return GemmReduce::none;
}

// One chain as a device function: runs of ops rendered simplified (as render_chain_function
// does), each `as NAME` a variable the later ops of the chain read.
std::string render_items(const std::string& fn, const std::vector<GemmChainItem>& items, ChanLayout chan) {
  bool names = false;
  for (const auto& it : items) names = names || it.named >= 0;
  std::vector<spec::Op> run;
  if (!names) {
    for (const auto& it : items) run.push_back(it.op);
    return render_chain_function(fn, run, chan);
  }
  std::string s = "__device__ __forceinline__ float " + fn + "(float v, int k, const float* __restrict__ chan) {\n";
  const auto flush = [&] {
    for (const auto& op : simplify_chain(run)) s += "  v = " + render_op_expr(op, "v", chan) + ";  // " + op_text(op) + "\n";
    run.clear();
  };
  for (const auto& it : items) {
    if (it.named < 0) {
      run.push_back(it.op);
      continue;
    }
    flush();
    const std::string var = fmt::format("nv{}", it.named);
    s += fmt::format("  const float {} = v;  // as a named value\n", var);
    if (chan.values.size() <= size_t(it.named)) chan.values.resize(size_t(it.named) + 1);
    chan.values[size_t(it.named)] = var;
  }
  flush();
  s += "  return v;\n}\n";
  return s;
}

}  // namespace

std::optional<GemmEpilogue> gemm_epilogue(const spec::Problem& problem) {
  const GeneralEpilogue g = general_epilogue(problem);
  const int64_t n = problem.main_shape().back();
  for (const spec::Shape& s : g.param_shapes) {
    int64_t elems = 1;
    for (int64_t d : s) elems *= d;
    if (elems != n || s.empty() || s.back() != n) return std::nullopt;  // the chan layout: N floats each
  }
  GemmEpilogue e;
  std::vector<bool> named_pre(size_t(problem.num_values), false), named_post(size_t(problem.num_values), false);
  for (const spec::Stage& st : g.stages) {
    const bool after = e.reduce != GemmReduce::none;
    std::vector<bool>& named = after ? named_post : named_pre;
    switch (st.kind) {
      case StageKind::op:
        if (!operands_ok(st.op, named, !after)) return std::nullopt;
        (after ? e.post : e.pre).push_back(GemmChainItem{-1, st.op});
        break;
      case StageKind::name:
        if (st.value_index < 0 || size_t(st.value_index) >= named.size()) return std::nullopt;
        named[size_t(st.value_index)] = true;
        (after ? e.post : e.pre).push_back(GemmChainItem{st.value_index, {}});
        break;
      case StageKind::reduce:
      case StageKind::logsumexp:
        if (after || st.dims != std::vector<int>{1}) return std::nullopt;
        e.reduce = st.kind == StageKind::logsumexp ? GemmReduce::logsumexp : reduce_of(st.reduce);
        break;
      default: return std::nullopt;
    }
  }
  return e;
}

std::string render_gemm_epilogue(const GemmEpilogue& e, const ChanLayout& chan) {
  if (e.reduce == GemmReduce::none) return render_items("ft_chain", e.pre, chan);
  std::string s = render_items("ft_chain_pre", e.pre, chan) + render_items("ft_chain_post", e.post, chan);
  switch (e.reduce) {
    case GemmReduce::min: return s + render_reduce_functions(spec::ReduceKind::min, chan.k);
    case GemmReduce::max: return s + render_reduce_functions(spec::ReduceKind::max, chan.k);
    case GemmReduce::sum: return s + render_reduce_functions(spec::ReduceKind::sum, chan.k);
    case GemmReduce::mean: return s + render_reduce_functions(spec::ReduceKind::mean, chan.k);
    case GemmReduce::logsumexp:
    case GemmReduce::none: break;
  }
  return s;
}

}  // namespace fusetune::codegen
