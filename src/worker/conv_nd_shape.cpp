#include "worker/conv_nd_shape.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::worker {

int conv_spatial_dims(spec::MainKind kind) {
  switch (kind) {
    case spec::MainKind::conv2d:
    case spec::MainKind::conv_transpose2d: return 2;
    case spec::MainKind::conv3d:
    case spec::MainKind::conv_transpose3d: return 3;
    case spec::MainKind::linear:
    case spec::MainKind::matmul: break;
  }
  throw InputError("a cuDNN conv graph needs a conv kind, not linear or matmul");
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dim, bool channels_last) {
  std::vector<int64_t> stride(dim.size(), 1);
  if (dim.size() < 2) return stride;
  if (!channels_last) {
    for (size_t i = dim.size() - 1; i-- > 0;) stride[i] = stride[i + 1] * dim[i + 1];
    return stride;
  }
  // Memory order N, spatial..., C: C innermost, the last spatial dim next, N outermost.
  stride[1] = 1;
  int64_t step = dim[1];
  for (size_t i = dim.size() - 1; i >= 2; --i) {
    stride[i] = step;
    step *= dim[i];
  }
  stride[0] = step;
  return stride;
}

int64_t forward_extent(int64_t size, int64_t pad, int64_t win, int64_t dil, int64_t stride) {
  return (size + 2 * pad - dil * (win - 1) - 1) / stride + 1;
}

namespace {

// The per-dim facts, depth first; a 2-D kind leaves the depth out.
struct Dim {
  const char* name;
  int64_t in, win, stride, pad, dil, out_pad, out;
};

std::vector<Dim> spatial(int dims, const spec::Conv& c) {
  std::vector<Dim> out;
  if (dims == 3) out.push_back({"depth", c.d, c.t, c.stride_d, c.pad_d, c.dil_d, c.out_pad_d, c.o()});
  out.push_back({"height", c.h, c.r, c.stride_h, c.pad_h, c.dil_h, c.out_pad_h, c.p()});
  out.push_back({"width", c.w, c.s, c.stride_w, c.pad_w, c.dil_w, c.out_pad_w, c.q()});
  return out;
}

}  // namespace

std::optional<std::string> conv_nd_unsupported(spec::MainKind kind, const spec::Conv& c, spec::Layout layout) {
  const int dims = conv_spatial_dims(kind);
  const bool transposed_kind = kind == spec::MainKind::conv_transpose2d || kind == spec::MainKind::conv_transpose3d;
  if (c.transposed != transposed_kind) return std::string("the conv's `transposed` does not match its kind");
  if (layout != spec::Layout::nchw && layout != spec::Layout::nhwc)
    return std::string("a cuDNN conv graph's layout is nchw or nhwc");
  if (dims == 2 && (c.d != 1 || c.t != 1 || c.stride_d != 1 || c.pad_d != 0 || c.dil_d != 1 || c.out_pad_d != 0))
    return std::string("a 2-D conv with depth fields set");
  if (c.groups < 1 || c.c % c.groups != 0 || c.k % c.groups != 0)
    return fmt::format("groups {} do not divide C {} and K {}", c.groups, c.c, c.k);
  if (c.n < 1 || c.c < 1 || c.k < 1) return std::string("an empty batch or channel count");
  for (const Dim& d : spatial(dims, c)) {
    if (d.in < 1 || d.win < 1 || d.stride < 1 || d.dil < 1 || d.pad < 0 || d.out_pad < 0)
      return fmt::format("{}: size, window, stride and dilation must be positive, padding not negative", d.name);
    if (d.out < 1) return fmt::format("{}: the output extent is {}", d.name, d.out);
    if (!c.transposed && d.out_pad != 0) return fmt::format("{}: output padding on a forward conv", d.name);
    // cuDNN checks dy's extent against the forward conv of dx's (symmetric padding): it is
    // in + floor(out_pad / stride), so only out_pad < stride maps (PyTorch also allows
    // out_pad < dilation, which would need post-padding that differs from the pre-padding).
    if (c.transposed && d.out_pad >= d.stride)
      return fmt::format("{}: output padding {} not below the stride {}", d.name, d.out_pad, d.stride);
  }
  return std::nullopt;
}

ConvNdGeometry conv_nd_geometry(spec::MainKind kind, const spec::Conv& c, spec::Layout layout) {
  if (const auto why = conv_nd_unsupported(kind, c, layout)) throw InputError("cuDNN conv graph: " + *why);
  const int dims = conv_spatial_dims(kind);
  const bool last = layout == spec::Layout::nhwc;
  ConvNdGeometry g;
  g.dgrad = c.transposed;
  std::vector<int64_t> in_sp, win_sp, out_sp;
  for (const Dim& d : spatial(dims, c)) {
    in_sp.push_back(d.in);
    win_sp.push_back(d.win);
    out_sp.push_back(d.out);
    g.pad.push_back(d.pad);
    g.stride.push_back(d.stride);
    g.dilation.push_back(d.dil);
  }
  const auto shape = [](int64_t a, int64_t b, const std::vector<int64_t>& sp) {
    std::vector<int64_t> v{a, b};
    v.insert(v.end(), sp.begin(), sp.end());
    return v;
  };
  g.x.dim = shape(c.n, c.c, in_sp);
  g.y.dim = shape(c.n, c.k, out_sp);
  // fprop's filter (K, C/g, taps); dgrad's is the forward conv's (C, K/g, taps): PyTorch's
  // transposed weight, so both are the weight as PyTorch stores it.
  g.w.dim = c.transposed ? shape(c.c, c.k / c.groups, win_sp) : shape(c.k, c.c / c.groups, win_sp);
  g.bias.dim = shape(1, c.k, std::vector<int64_t>(size_t(dims), 1));
  for (NdTensor* t : {&g.x, &g.w, &g.y, &g.bias}) t->stride = packed_strides(t->dim, last);
  return g;
}

}  // namespace fusetune::worker
