#include "reference/model_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "reference/bounds.hpp"
#include "reference/model_main.hpp"
#include "reference/model_stages.hpp"
#include "reference/model_tensor.hpp"
#include "reference/op_math.hpp"
#include "spec/ops.hpp"
#include "spec/shape_rules.hpp"
#include "kernel_templates/stages/stage_bounds.cuh"

namespace fusetune::reference {
namespace {

static_assert(int(spec::OpKind::add) == FT_BIN_ADD && int(spec::OpKind::sub) == FT_BIN_SUB &&
                  int(spec::OpKind::rsub) == FT_BIN_RSUB && int(spec::OpKind::mul) == FT_BIN_MUL &&
                  int(spec::OpKind::div) == FT_BIN_DIV && int(spec::OpKind::rdiv) == FT_BIN_RDIV &&
                  int(spec::OpKind::min) == FT_BIN_MIN && int(spec::OpKind::max) == FT_BIN_MAX,
              "spec::OpKind's binary ops must match FT_BIN_* in kernel_templates/stages/stage_bounds.cuh");

using detail::Grouping;
using spec::Shape;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A value with each element's bound and variance.
struct BTensor {
  Shape shape;
  std::vector<Bounded> v;
};

BTensor exact(const Shape& shape, const std::vector<float>& values) {
  BTensor t{shape, std::vector<Bounded>(values.size())};
  for (std::size_t i = 0; i < values.size(); ++i) t.v[i].v = double(values[i]);
  return t;
}

std::vector<bool> mask(std::size_t rank, const std::vector<int>& dims) {
  std::vector<bool> m(rank, false);
  for (int d : dims) m[std::size_t(d)] = true;
  return m;
}

Shape reduced_shape(const Shape& in, const std::vector<int>& dims, bool keepdim) {
  const std::vector<bool> m = mask(in.size(), dims);
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!m[d]) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// Group members in element order: members[g] lists the flat indices of group g.
std::vector<std::vector<std::size_t>> members_of(const Grouping& g) {
  std::vector<std::vector<std::size_t>> m(g.count.size());
  for (std::size_t i = 0; i < g.key.size(); ++i) m[std::size_t(g.key[i])].push_back(i);
  return m;
}

// The main operator's outputs with the conv rule's E0 and V0 (the same for a GEMM: a sum of
// `n` products of TF32-rounded fp32 numbers; under fp32 V0 is the fp32 rule's dot-product
// term) from its terms, then its bias.
BTensor main_bounded(const spec::Problem& p, const ModelData& d, const detail::MainTerms& terms, MathMode math) {
  const float* bias = d.bias.empty() ? nullptr : d.bias.data();
  BTensor out{p.main_shape(), std::vector<Bounded>(terms.y.size())};
  const Shape shape = out.shape;
  const int64_t channels = shape[1];
  int64_t inner = 1;
  for (std::size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
  for (std::size_t i = 0; i < terms.y.size(); ++i) {
    out.v[i] = conv_bounded(terms.y[i], terms.a[i], terms.b[i], std::max<int64_t>(terms.n[i], 1), math);
    if (bias == nullptr) continue;
    // conv: the bias per channel (dim 1); linear: per feature, the last dim (dim 1 of (M, N))
    const int64_t b = p.is_conv() ? (int64_t(i) / inner) % channels : int64_t(i) % p.gemm.n;
    add_bias_bounded(out.v[i], double(bias[b]));
  }
  return out;
}

BTensor run_chain(const spec::Problem& p, const ModelData& d, BTensor x, MathMode math) {
  const int64_t C = x.shape[1];
  int64_t inner = 1;
  for (std::size_t i = 2; i < x.shape.size(); ++i) inner *= x.shape[i];
  const auto np = std::size_t(p.num_params);
  std::vector<double> chan(np * std::size_t(C));
  for (std::size_t i = 0; i < np; ++i) {
    for (int64_t c = 0; c < C; ++c) chan[std::size_t(c) * np + i] = d.params[i][std::size_t(c)];
  }
  for (std::size_t e = 0; e < x.v.size(); ++e) {
    const double* chan_c = chan.data() + std::size_t((int64_t(e) / inner) % C) * np;
    for (const spec::Op& op : p.pre) apply_op_bounded(op, x.v[e], chan_c);
  }
  if (p.reduce) {
    const Grouping g = detail::group_by(x.shape, mask(x.shape.size(), {1}));
    BTensor y{reduced_shape(x.shape, {1}, true), {}};
    for (const auto& members : members_of(g)) {
      std::vector<Bounded> set;
      for (std::size_t i : members) set.push_back(x.v[i]);
      y.v.push_back(reduce_bounded(*p.reduce, set, math));
    }
    x = std::move(y);
  }
  for (Bounded& v : x.v) {
    for (const spec::Op& op : p.post) apply_op_bounded(op, v, nullptr);
  }
  return x;
}

// An op stage: operands that are named values carry their own bounds (ft_bound_binary); the
// others (scalars, parameters, inputs) are exact and go through the op's own rule.
BTensor op_stage(const spec::Problem& p, const spec::Stage& st, const BTensor& x, const std::vector<BTensor>& values,
                 const std::vector<BTensor>& params, const std::vector<BTensor>& inputs) {
  std::vector<Shape> value_shapes;
  for (const BTensor& v : values) value_shapes.push_back(v.shape);
  const Shape shape = spec::stage_shape(p, st, x.shape, value_shapes);
  const spec::Op& op = st.op;
  std::vector<const BTensor*> operand(op.args.size(), nullptr);
  spec::Op local = op;
  int carried = -1;
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    const spec::Operand& a = op.args[i];
    if (a.value_index >= 0) operand[i] = &values.at(std::size_t(a.value_index)), carried = int(i);
    else if (a.input_index >= 0) operand[i] = &inputs.at(std::size_t(a.input_index));
    else if (a.per_channel) operand[i] = &params.at(std::size_t(a.param_index));
    if (operand[i] != nullptr) local.args[i] = spec::Operand{true, 0.0, int(i)};
  }
  std::vector<std::vector<int64_t>> maps(operand.size());
  for (std::size_t i = 0; i < operand.size(); ++i) {
    if (operand[i] != nullptr) maps[i] = detail::broadcast_map(operand[i]->shape, shape);
  }
  const std::vector<int64_t> xmap = detail::broadcast_map(x.shape, shape);
  BTensor out{shape, std::vector<Bounded>(xmap.size())};
  std::vector<double> at(std::max<std::size_t>(operand.size(), 1), 0.0);
  const double ulps = spec::op_info(op.kind).bound.ulps;
  for (std::size_t e = 0; e < xmap.size(); ++e) {
    for (std::size_t i = 0; i < operand.size(); ++i) {
      if (operand[i] != nullptr) at[i] = operand[i]->v[std::size_t(maps[i][e])].v;
    }
    Bounded b = x.v[std::size_t(xmap[e])];
    if (carried < 0) {
      apply_op_bounded(local, b, at.data());
    } else {
      const Bounded& y = operand[std::size_t(carried)]->v[std::size_t(maps[std::size_t(carried)][e])];
      const double r = apply_op(local, b.v, at.data());
      double e_out = 0.0, var = 0.0;
      ft_bound_binary(int(op.kind), b.v, b.e, b.var, y.v, y.e, y.var, r, ulps, e_out, var);
      b = {r, e_out, var};
    }
    out.v[e] = b;
  }
  return out;
}

BTensor reduce_stage(const BTensor& x, spec::ReduceKind kind, const std::vector<int>& dims, bool keepdim,
                     MathMode math) {
  const Grouping g = detail::group_by(x.shape, mask(x.shape.size(), dims));
  BTensor out{reduced_shape(x.shape, dims, keepdim), {}};
  for (const auto& members : members_of(g)) {
    std::vector<Bounded> set;
    for (std::size_t i : members) set.push_back(x.v[i]);
    out.v.push_back(reduce_bounded(kind, set, math));
  }
  return out;
}

// One group of a logsumexp or softmax: its max, logsumexp, largest bound and the softmax-weighted
// sum of the variances' roots.
struct ExpGroup {
  double m = -kInf, lse = 0.0, e_max = 0.0, wsum = 0.0, n = 0.0;
};

ExpGroup exp_group(const BTensor& x, const std::vector<std::size_t>& members) {
  ExpGroup g;
  g.n = double(members.size());
  for (std::size_t i : members) {
    g.m = reduce_step(spec::ReduceKind::max, g.m, x.v[i].v);
    g.e_max = std::max(g.e_max, x.v[i].e);
  }
  const double shift = std::isinf(g.m) ? 0.0 : g.m;
  double s = 0.0;
  for (std::size_t i : members) s += std::exp(x.v[i].v - shift);
  g.lse = std::log(s) + shift;
  for (std::size_t i : members) g.wsum += std::exp(x.v[i].v - g.lse) * std::sqrt(x.v[i].var);
  return g;
}

BTensor logsumexp_stage(const BTensor& x, const spec::Stage& st) {
  const Grouping g = detail::group_by(x.shape, mask(x.shape.size(), st.dims));
  BTensor out{reduced_shape(x.shape, st.dims, st.keepdim), {}};
  for (const auto& members : members_of(g)) {
    const ExpGroup eg = exp_group(x, members);
    Bounded b{eg.lse, 0.0, 0.0};
    ft_bound_logsumexp(eg.lse, eg.n, eg.e_max, eg.wsum, b.e, b.var);
    out.v.push_back(b);
  }
  return out;
}

BTensor softmax_stage(const BTensor& x, const spec::Stage& st) {
  const bool log = st.kind == spec::StageKind::log_softmax;
  const Grouping g = detail::group_by(x.shape, mask(x.shape.size(), st.dims));
  BTensor out{x.shape, std::vector<Bounded>(x.v.size())};
  for (const auto& members : members_of(g)) {
    const ExpGroup eg = exp_group(x, members);
    const double shift = std::isinf(eg.m) ? 0.0 : eg.m;
    double s = 0.0;
    for (std::size_t i : members) s += std::exp(x.v[i].v - shift);
    for (std::size_t i : members) {
      const Bounded& in = x.v[i];
      Bounded& b = out.v[i];
      if (log) {
        b.v = (in.v - shift) - std::log(s);
        ft_bound_log_softmax(b.v, eg.lse, eg.n, in.e, in.var, eg.e_max, eg.wsum, b.e, b.var);
      } else {
        b.v = std::exp(in.v - shift) / s;
        ft_bound_softmax(b.v, in.v, eg.m, eg.n, in.e, in.var, eg.e_max, eg.wsum, b.e, b.var);
      }
    }
  }
  return out;
}

BTensor pool_stage(const BTensor& x, const spec::Stage& st, MathMode math) {
  const detail::Pooling pooling = detail::pool_windows(x.shape, st);
  BTensor out{pooling.shape, {}};
  for (const detail::PoolWindow& w : pooling.windows) {
    std::vector<Bounded> set;
    for (int64_t i : w.elems) set.push_back(x.v[std::size_t(i)]);
    if (st.pool == spec::PoolKind::max) {
      out.v.push_back(reduce_bounded(spec::ReduceKind::max, set, math));
      continue;
    }
    const Bounded sum = reduce_bounded(spec::ReduceKind::sum, set, math);
    Bounded b{sum.v / double(w.divisor), 0.0, 0.0};
    ft_bound_divide(b.v, double(w.divisor), sum.e, sum.var, b.e, b.var);
    out.v.push_back(b);
  }
  return out;
}

BTensor norm_stage(const BTensor& x, const spec::Stage& st, const BTensor* weight, const BTensor* bias) {
  const Grouping g = detail::norm_groups(x.shape, st);
  const std::vector<int64_t> wmap = weight != nullptr ? detail::broadcast_map(weight->shape, x.shape) : std::vector<int64_t>{};
  const std::vector<int64_t> bmap = bias != nullptr ? detail::broadcast_map(bias->shape, x.shape) : std::vector<int64_t>{};
  BTensor out{x.shape, std::vector<Bounded>(x.v.size())};
  for (const auto& members : members_of(g)) {
    ft_norm_bound nb{};
    nb.n = double(members.size());
    nb.eps = st.eps;
    double mean = 0.0, e2 = 0.0;
    for (std::size_t i : members) {
      const Bounded& b = x.v[i];
      mean += b.v;
      nb.e_mean += b.e;
      e2 += b.e * b.e;
      nb.abs_mean += std::fabs(b.v);
      nb.sq_mean += b.v * b.v;
      nb.vsqrt_mean += std::sqrt(b.var);
      if (!(b.e < kInf)) nb.unchecked = 1;
    }
    mean /= nb.n;
    nb.e_mean /= nb.n;
    nb.e_rms = std::sqrt(e2 / nb.n);
    nb.abs_mean /= nb.n;
    nb.sq_mean /= nb.n;
    nb.vsqrt_mean /= nb.n;
    double var = 0.0;
    for (std::size_t i : members) var += (x.v[i].v - mean) * (x.v[i].v - mean);
    nb.sigma = std::sqrt(var / nb.n + st.eps);
    for (std::size_t i : members) {
      const Bounded& in = x.v[i];
      const double c = in.v - mean;
      const double w = weight != nullptr ? weight->v[std::size_t(wmap[i])].v : 1.0;
      double y = c * (1.0 / nb.sigma);
      if (weight != nullptr) y *= w;
      if (bias != nullptr) y += bias->v[std::size_t(bmap[i])].v;
      Bounded& b = out.v[i];
      b.v = y;
      ft_bound_norm(nb, c, in.e, in.var, w, y, b.e, b.var);
    }
  }
  return out;
}

BTensor run_stages(const spec::Problem& p, const ModelData& d, BTensor x, MathMode math) {
  std::vector<BTensor> params, inputs, values(std::size_t(p.num_values));
  for (std::size_t i = 0; i < p.param_shapes.size(); ++i) params.push_back(exact(p.param_shapes[i], d.params[i]));
  for (std::size_t i = 0; i < p.input_shapes.size(); ++i) inputs.push_back(exact(p.input_shapes[i], d.inputs[i]));
  auto param = [&](int index) { return index >= 0 ? &params.at(std::size_t(index)) : nullptr; };
  for (const spec::Stage& st : p.stages) {
    switch (st.kind) {
      case spec::StageKind::op: x = op_stage(p, st, x, values, params, inputs); break;
      case spec::StageKind::reduce: x = reduce_stage(x, st.reduce, st.dims, st.keepdim, math); break;
      case spec::StageKind::logsumexp: x = logsumexp_stage(x, st); break;
      case spec::StageKind::softmax:
      case spec::StageKind::log_softmax: x = softmax_stage(x, st); break;
      case spec::StageKind::pool: x = pool_stage(x, st, math); break;
      case spec::StageKind::norm: x = norm_stage(x, st, param(st.weight_param), param(st.bias_param)); break;
      case spec::StageKind::name: values.at(std::size_t(st.value_index)) = x; break;
    }
  }
  return x;
}

// model_sizes' checks of everything but the input and the weight (their terms stand in for
// them), and the terms' own size.
void check_terms_data(const spec::Problem& p, const ModelData& d, const detail::MainTerms& t) {
  const ModelSizes want = model_sizes(p);
  const auto out = std::size_t(p.main_out_elems());
  if (t.y.size() != out || t.a.size() != out || t.b.size() != out || t.n.size() != out)
    throw InputError("model bounds: the main operator's terms hold " + std::to_string(t.y.size()) + " outputs, " +
                     "the spec's main output has " + std::to_string(out));
  const auto check = [](const char* what, std::size_t have, int64_t need) {
    if (have != std::size_t(need))
      throw InputError(std::string("model bounds: ") + what + " has " + std::to_string(have) + " floats, the spec " +
                       "needs " + std::to_string(need));
  };
  check("the bias", d.bias.size(), want.bias);
  check("the parameter list", d.params.size(), int64_t(want.params.size()));
  check("the extra input list", d.inputs.size(), int64_t(want.inputs.size()));
  for (std::size_t i = 0; i < want.params.size(); ++i) check("a parameter", d.params[i].size(), want.params[i]);
  for (std::size_t i = 0; i < want.inputs.size(); ++i) check("an extra input", d.inputs[i].size(), want.inputs[i]);
}

}  // namespace

BoundedReference model_reference_with_bounds(const spec::Problem& p, const ModelData& d, MathMode math) {
  check_model_data(p, d);
  return model_reference_with_terms(p, d, detail::main_terms(p, d), math);
}

BoundedReference model_reference_with_terms(const spec::Problem& p, const ModelData& d,
                                            const detail::MainTerms& terms, MathMode math) {
  check_terms_data(p, d, terms);
  BTensor x = main_bounded(p, d, terms, math);
  x = p.stages.empty() ? run_chain(p, d, std::move(x), math) : run_stages(p, d, std::move(x), math);
  if (x.shape != spec::out_shape(p)) {
    throw InputError("model bounds: the output has shape " + spec::shape_text(x.shape) + ", spec says " +
                     spec::shape_text(spec::out_shape(p)));
  }
  BoundedReference out;
  for (const Bounded& b : x.v) {
    out.values.push_back(b.v);
    out.bound.push_back(store_bound(b.e));
    out.var.push_back(store_bound(b.var));
  }
  return out;
}

}  // namespace fusetune::reference
