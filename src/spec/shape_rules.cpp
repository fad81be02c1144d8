#include "spec/shape_rules.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace fusetune::spec {

int64_t elems(const Shape& shape) {
  int64_t e = 1;
  for (int64_t x : shape) e *= x;
  return e;
}

std::string shape_text(const Shape& shape) {
  return shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
}

Shape broadcast(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      throw ShapeFault(fmt::format("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
    }
    out[rank - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

Shape operand_shape(const Problem& problem, const Operand& operand, const std::vector<Shape>& value_shapes) {
  if (operand.value_index >= 0) return value_shapes.at(std::size_t(operand.value_index));
  if (operand.input_index >= 0) return problem.input_shapes.at(std::size_t(operand.input_index));
  if (operand.per_channel) {
    if (!problem.param_shapes.empty()) return problem.param_shapes.at(std::size_t(operand.param_index));
    Shape s = problem.main_shape();  // chain form: (1, K, 1, ...)
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = i == 1 ? s[i] : 1;
    return s;
  }
  return {};
}

namespace {

void check_dims(const std::vector<int>& dims, std::size_t rank) {
  for (int d : dims) {
    if (d < 0 || std::size_t(d) >= rank) {
      throw ShapeFault(fmt::format("dim {} is out of range for a value of rank {}", d, rank));
    }
  }
}

Shape reduced(const Shape& in, const std::vector<int>& dims, bool keepdim) {
  check_dims(dims, in.size());
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool gone = std::find(dims.begin(), dims.end(), int(i)) != dims.end();
    if (!gone) out.push_back(in[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

Shape pooled(const Stage& st, const Shape& in) {
  const auto nd = std::size_t(st.pool_dims);
  if (in.size() < nd + 1) {
    throw ShapeFault(fmt::format("{}-D pooling needs a value of rank {} or more, found {}", nd, nd + 1,
                                 shape_text(in)));
  }
  Shape out = in;
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t dim = in.size() - nd + i;
    const int64_t k = st.window[i], s = st.stride[i], p = st.pad[i];
    if (2 * p > k) throw ShapeFault(fmt::format("pad {} must be at most half the window {}", p, k));
    const int64_t span = in[dim] + 2 * p - k;
    if (span < 0) {
      throw ShapeFault(fmt::format("the window {} exceeds dim {} of {} plus padding", k, dim, shape_text(in)));
    }
    out[dim] = span / s + 1;
  }
  return out;
}

void check_norm(const Stage& st, const Shape& in) {
  switch (st.norm) {
    case NormKind::batch: {
      if (in.size() < 2) throw ShapeFault(fmt::format("batch_norm needs rank 2 or more, found {}", shape_text(in)));
      if (elems(in) / in[1] <= 1) {
        throw ShapeFault(fmt::format("batch_norm over {} has one value per channel (PyTorch refuses it in training mode)",
                                     shape_text(in)));
      }
      return;
    }
    case NormKind::group:
      if (in.size() < 2) throw ShapeFault(fmt::format("group_norm needs rank 2 or more, found {}", shape_text(in)));
      if (in[1] % st.groups != 0) {
        throw ShapeFault(fmt::format("group_norm: groups = {} must divide the {} channels", st.groups, in[1]));
      }
      return;
    case NormKind::instance:
      if (in.size() < 3) throw ShapeFault(fmt::format("instance_norm needs rank 3 or more, found {}", shape_text(in)));
      return;
    case NormKind::layer:
      if (st.norm_dims < 1 || std::size_t(st.norm_dims) > in.size()) {
        throw ShapeFault(fmt::format("layer_norm over the last {} dims of {}", st.norm_dims, shape_text(in)));
      }
      return;
  }
}

}  // namespace

Shape stage_shape(const Problem& problem, const Stage& st, const Shape& in, const std::vector<Shape>& value_shapes) {
  switch (st.kind) {
    case StageKind::op: {
      Shape out = in;
      for (const Operand& a : st.op.args) out = broadcast(out, operand_shape(problem, a, value_shapes));
      return out;
    }
    case StageKind::reduce:
    case StageKind::logsumexp: return reduced(in, st.dims, st.keepdim);
    case StageKind::softmax:
    case StageKind::log_softmax: check_dims(st.dims, in.size()); return in;
    case StageKind::pool: return pooled(st, in);
    case StageKind::norm: check_norm(st, in); return in;
    case StageKind::name: return in;
  }
  return in;
}

std::vector<Shape> epilogue_shapes(const Problem& problem, std::vector<Shape>* value_shapes) {
  std::vector<Shape> out{problem.main_shape()};
  std::vector<Shape> values;
  if (problem.stages.empty()) {
    Shape s = out[0];
    if (problem.reduce) s[1] = 1;
    out.push_back(s);
  }
  for (const Stage& st : problem.stages) {
    if (st.kind == StageKind::name) values.push_back(out.back());
    out.push_back(stage_shape(problem, st, out.back(), values));
  }
  if (value_shapes != nullptr) *value_shapes = std::move(values);
  return out;
}

Shape out_shape(const Problem& problem) { return epilogue_shapes(problem).back(); }

}  // namespace fusetune::spec
