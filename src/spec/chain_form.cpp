#include "spec/chain_form.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "spec/shape_rules.hpp"

namespace fusetune::spec::detail {
namespace {

void drop_unused_names(Problem& p) {
  std::vector<bool> used(std::size_t(p.num_values), false);
  for (const Stage& st : p.stages) {
    if (st.kind != StageKind::op) continue;
    for (const Operand& a : st.op.args) {
      if (a.value_index >= 0) used[std::size_t(a.value_index)] = true;
    }
  }
  std::vector<int> renumber(used.size(), -1);
  int next = 0;
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (used[i]) renumber[i] = next++;
  }
  std::vector<Stage> kept;
  for (Stage& st : p.stages) {
    if (st.kind == StageKind::name) {
      if (!used[std::size_t(st.value_index)]) continue;
      st.value_index = renumber[std::size_t(st.value_index)];
    }
    if (st.kind == StageKind::op) {
      for (Operand& a : st.op.args) {
        if (a.value_index >= 0) a.value_index = renumber[std::size_t(a.value_index)];
      }
    }
    kept.push_back(std::move(st));
  }
  p.stages = std::move(kept);
  p.num_values = next;
}

void drop_identity_reductions(Problem& p) {
  std::vector<Stage> kept;
  Shape shape = p.main_shape();
  std::vector<Shape> values;
  bool first_reduction = true;
  for (Stage& st : p.stages) {
    // Version 1 kept the channel reduction of a K = 1 conv (and its key): so does this.
    const bool kept_by_v1 = first_reduction && st.kind == StageKind::reduce && st.dims == std::vector<int>{1};
    if (st.kind != StageKind::op && st.kind != StageKind::name) first_reduction = false;
    if ((st.kind == StageKind::reduce || st.kind == StageKind::logsumexp) && st.keepdim && !kept_by_v1) {
      st.dims.erase(std::remove_if(st.dims.begin(), st.dims.end(), [&](int d) { return shape[std::size_t(d)] == 1; }),
                    st.dims.end());
      if (st.dims.empty()) continue;
    }
    if (st.kind == StageKind::name) values.push_back(shape);
    shape = stage_shape(p, st, shape, values);
    kept.push_back(std::move(st));
  }
  p.stages = std::move(kept);
}

bool chain_operands(const Problem& p, const Op& op, const Shape& main, bool after_reduce) {
  for (const Operand& a : op.args) {
    if (a.value_index >= 0 || a.input_index >= 0) return false;
    if (a.per_channel) {
      if (after_reduce) return false;
      const Shape& s = p.param_shapes[std::size_t(a.param_index)];
      Shape per_channel(main.size(), 1);
      per_channel[1] = main[1];
      if (s != per_channel) return false;
    }
  }
  return true;
}

void lower(Problem& p) {
  const Shape main = p.main_shape();
  if (main.size() < 2) return;
  std::vector<Op> pre, post;
  std::optional<ReduceKind> reduce;
  for (const Stage& st : p.stages) {
    if (st.kind == StageKind::op) {
      if (!chain_operands(p, st.op, main, reduce.has_value())) return;
      (reduce ? post : pre).push_back(st.op);
    } else if (st.kind == StageKind::reduce && !reduce && st.keepdim && st.dims == std::vector<int>{1}) {
      reduce = st.reduce;
    } else {
      return;
    }
  }
  p.pre = std::move(pre);
  p.reduce = reduce;
  p.post = std::move(post);
  p.stages.clear();
  p.param_shapes.clear();
  p.input_shapes.clear();
  p.num_values = 0;
}

}  // namespace

void simplify_and_lower(Problem& problem) {
  drop_unused_names(problem);
  drop_identity_reductions(problem);
  lower(problem);
}

}  // namespace fusetune::spec::detail
