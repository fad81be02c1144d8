#include "reference/model_stages.hpp"

#include <array>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "reference/op_math.hpp"

namespace fusetune::reference::detail {
namespace {

using spec::ReduceKind;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<bool> mask(std::size_t rank, const std::vector<int>& dims) {
  std::vector<bool> m(rank, false);
  for (int d : dims) m[std::size_t(d)] = true;
  return m;
}

// The shape a reduction over `dims` leaves. The flat order is the keepdim shape's either way.
spec::Shape reduced_shape(const spec::Shape& in, const std::vector<int>& dims, bool keepdim) {
  const std::vector<bool> m = mask(in.size(), dims);
  spec::Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!m[d]) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// Per-group max (NaN-propagating, like torch.amax).
std::vector<double> group_max(const Tensor& x, const Grouping& g) {
  std::vector<double> m(g.count.size(), -kInf);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    double& acc = m[std::size_t(g.key[i])];
    acc = reduce_step(ReduceKind::max, acc, x.v[i]);
  }
  return m;
}

// Per-group sum of exp(x - shift).
std::vector<double> group_sum_exp(const Tensor& x, const Grouping& g, const std::vector<double>& shift) {
  std::vector<double> s(g.count.size(), 0.0);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const auto k = std::size_t(g.key[i]);
    s[k] += std::exp(x.v[i] - shift[k]);
  }
  return s;
}

// One pooled dim: the window of output `o` is [lo, hi) in the input, and `padded` its size
// clipped to the padded input only (PyTorch's count_include_pad divisor).
struct Window {
  int64_t lo, hi, padded;
};
Window window(int64_t o, int64_t size, int64_t k, int64_t s, int64_t p) {
  const int64_t start = o * s - p;
  const int64_t end = std::min(start + k, size + p);
  return {std::max<int64_t>(start, 0), std::min(end, size), end - start};
}

}  // namespace

Tensor elementwise(const spec::Op& op, const Tensor& x, const std::vector<const Tensor*>& operands,
                   const spec::Shape& out_shape) {
  // Tensor operands become per-channel operands read from `at`, so op_math's apply_op (the
  // one meaning of every op, scalars rounded to fp32 there) applies them.
  spec::Op local = op;
  std::vector<std::vector<int64_t>> maps(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr) continue;
    local.args[i] = spec::Operand{true, 0.0, int(i)};
    maps[i] = broadcast_map(operands[i]->shape, out_shape);
  }
  const std::vector<int64_t> xmap = broadcast_map(x.shape, out_shape);
  Tensor out{out_shape, std::vector<double>(xmap.size())};
  std::vector<double> at(std::max<std::size_t>(operands.size(), 1), 0.0);
  for (std::size_t e = 0; e < xmap.size(); ++e) {
    for (std::size_t i = 0; i < operands.size(); ++i) {
      if (operands[i] != nullptr) at[i] = operands[i]->v[std::size_t(maps[i][e])];
    }
    out.v[e] = apply_op(local, x.v[std::size_t(xmap[e])], at.data());
  }
  return out;
}

Tensor reduce(const Tensor& x, ReduceKind kind, const std::vector<int>& dims, bool keepdim) {
  const Grouping g = group_by(x.shape, mask(x.shape.size(), dims));
  Tensor out{reduced_shape(x.shape, dims, keepdim), std::vector<double>(g.count.size(), reduce_init(kind))};
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    double& acc = out.v[std::size_t(g.key[i])];
    acc = reduce_step(kind, acc, x.v[i]);
  }
  for (std::size_t k = 0; k < out.v.size(); ++k) out.v[k] = reduce_finish(kind, out.v[k], g.count[k]);
  return out;
}

Tensor logsumexp(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  const Grouping g = group_by(x.shape, mask(x.shape.size(), dims));
  std::vector<double> shift = group_max(x, g);
  for (double& m : shift) m = std::isinf(m) ? 0.0 : m;
  const std::vector<double> s = group_sum_exp(x, g, shift);
  Tensor out{reduced_shape(x.shape, dims, keepdim), std::vector<double>(s.size())};
  for (std::size_t k = 0; k < s.size(); ++k) out.v[k] = std::log(s[k]) + shift[k];
  return out;
}

Tensor softmax(const Tensor& x, int dim, bool log) {
  const Grouping g = group_by(x.shape, mask(x.shape.size(), {dim}));
  const std::vector<double> m = group_max(x, g);
  const std::vector<double> s = group_sum_exp(x, g, m);
  Tensor out{x.shape, std::vector<double>(x.v.size())};
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const auto k = std::size_t(g.key[i]);
    out.v[i] = log ? (x.v[i] - m[k]) - std::log(s[k]) : std::exp(x.v[i] - m[k]) / s[k];
  }
  return out;
}

Pooling pool_windows(const spec::Shape& shape, const spec::Stage& st) {
  // The pooled dims as the last of three (D, H, W); missing ones have size 1 and window 1.
  const auto nd = std::size_t(st.pool_dims);
  const std::size_t rank = shape.size();
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0};
  Pooling pooling{shape, {}};
  for (std::size_t i = 0; i < nd; ++i) {
    const std::size_t j = 3 - nd + i;
    in[j] = shape[rank - nd + i];
    k[j] = st.window[i], s[j] = st.stride[i], p[j] = st.pad[i];
    out[j] = (in[j] + 2 * p[j] - k[j]) / s[j] + 1;
    pooling.shape[rank - nd + i] = out[j];
  }
  const int64_t outer = spec::elems(shape) / (in[0] * in[1] * in[2]);
  pooling.windows.reserve(std::size_t(spec::elems(pooling.shape)));
  for (int64_t b = 0; b < outer; ++b) {
    const int64_t base = b * in[0] * in[1] * in[2];
    for (int64_t od = 0; od < out[0]; ++od) {
      const Window wd = window(od, in[0], k[0], s[0], p[0]);
      for (int64_t oh = 0; oh < out[1]; ++oh) {
        const Window wh = window(oh, in[1], k[1], s[1], p[1]);
        for (int64_t ow = 0; ow < out[2]; ++ow) {
          const Window ww = window(ow, in[2], k[2], s[2], p[2]);
          PoolWindow pw;
          for (int64_t d = wd.lo; d < wd.hi; ++d) {
            for (int64_t h = wh.lo; h < wh.hi; ++h) {
              for (int64_t w = ww.lo; w < ww.hi; ++w) pw.elems.push_back(base + (d * in[1] + h) * in[2] + w);
            }
          }
          pw.divisor = st.count_include_pad ? wd.padded * wh.padded * ww.padded
                                            : (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
          pooling.windows.push_back(std::move(pw));
        }
      }
    }
  }
  return pooling;
}

Tensor pool(const Tensor& x, const spec::Stage& st) {
  const Pooling pooling = pool_windows(x.shape, st);
  Tensor y{pooling.shape, std::vector<double>(pooling.windows.size())};
  const bool is_max = st.pool == spec::PoolKind::max;
  for (std::size_t o = 0; o < pooling.windows.size(); ++o) {
    double acc = is_max ? -kInf : 0.0;
    for (int64_t i : pooling.windows[o].elems) {
      const double v = x.v[std::size_t(i)];
      acc = is_max ? reduce_step(ReduceKind::max, acc, v) : acc + v;
    }
    y.v[o] = is_max ? acc : acc / double(pooling.windows[o].divisor);
  }
  return y;
}

Grouping norm_groups(const spec::Shape& shape, const spec::Stage& st) {
  // Which elements share statistics: a reduction's groups over a view of x.
  const std::size_t rank = shape.size();
  spec::Shape view = shape;
  std::vector<bool> reduced(rank, false);
  switch (st.norm) {
    case spec::NormKind::batch:  // per channel, over the batch and every other dim
      for (std::size_t d = 0; d < rank; ++d) reduced[d] = d != 1;
      break;
    case spec::NormKind::group: {  // (N, G, C/G * rest): per (n, group)
      const int64_t n = shape[0];
      view = {n, st.groups, spec::elems(shape) / (n * st.groups)};
      reduced = {false, false, true};
      break;
    }
    case spec::NormKind::instance:  // per (n, c), over dims 2 and on
      for (std::size_t d = 2; d < rank; ++d) reduced[d] = true;
      break;
    case spec::NormKind::layer:  // over the last norm_dims dims
      for (std::size_t d = rank - std::size_t(st.norm_dims); d < rank; ++d) reduced[d] = true;
      break;
  }
  return group_by(view, reduced);
}

Tensor norm(const Tensor& x, const spec::Stage& st, const Tensor* weight, const Tensor* bias) {
  const Grouping g = norm_groups(x.shape, st);
  std::vector<double> mean(g.count.size(), 0.0), var(g.count.size(), 0.0);
  for (std::size_t i = 0; i < x.v.size(); ++i) mean[std::size_t(g.key[i])] += x.v[i];
  for (std::size_t k = 0; k < mean.size(); ++k) mean[k] /= double(g.count[k]);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const double dev = x.v[i] - mean[std::size_t(g.key[i])];
    var[std::size_t(g.key[i])] += dev * dev;
  }
  std::vector<double> rstd(var.size());
  for (std::size_t k = 0; k < var.size(); ++k) rstd[k] = 1.0 / std::sqrt(var[k] / double(g.count[k]) + st.eps);

  Tensor y{x.shape, std::vector<double>(x.v.size())};
  const std::vector<int64_t> wmap = weight != nullptr ? broadcast_map(weight->shape, x.shape) : std::vector<int64_t>{};
  const std::vector<int64_t> bmap = bias != nullptr ? broadcast_map(bias->shape, x.shape) : std::vector<int64_t>{};
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const auto k = std::size_t(g.key[i]);
    double v = (x.v[i] - mean[k]) * rstd[k];
    if (weight != nullptr) v *= weight->v[std::size_t(wmap[i])];
    if (bias != nullptr) v += bias->v[std::size_t(bmap[i])];
    y.v[i] = v;
  }
  return y;
}

}  // namespace fusetune::reference::detail
