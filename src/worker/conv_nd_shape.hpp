#pragma once
// What a cuDNN graph is told about one conv of any kind (conv2d, conv3d, conv_transpose2d/3d):
// the dims and strides of its three tensors and the bias, and the conv's per-dim geometry.
// Pure arithmetic on spec::Conv, apart from the graph (worker/conv_nd_graph.hpp) so that
// GPU-free tests check it (tests/conv_nd_graph_shape_test.cpp).
//
// A transposed conv is cuDNN's conv_dgrad (data gradient) of the forward conv F whose INPUT
// has the transposed conv's output shape and whose OUTPUT has its input shape:
//   F: (N, K, O, P, Q) -> (N, C, D, H, W), filter (C, K/g, T, R, S), same stride/pad/dilation;
//   dgrad(F) reads dy = x (N, C, D, H, W) and writes dx = y (N, K, O, P, Q).
// F's filter in cuDNN's (out, in/g, taps) order is PyTorch's transposed weight (C, K/g, T, R, S)
// as stored: cuDNN's dgrad sums dx[k, o] = sum over c in k's group, taps, of
// dy[c, i] * w[c, k mod K/g, tap] with o = i*stride - pad + tap*dil, which is
// conv_transpose's definition (reference/model_main.cpp's `source`). Groups: cuDNN infers
// g = dx channels / w's dim 1 = K / (K/g); C/g channels of dy feed each group, as in PyTorch.
// Output padding appears only as the extra rows of dx's shape (o() adds it): with symmetric
// padding F's forward extent of O is D + floor(out_pad / stride), so out_pad < stride keeps
// cuDNN's shape check; PyTorch also allows out_pad < dilation, which is refused here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::worker {

// One tensor's dims and element strides in cuDNN's logical order (N or K first, then C, then
// the spatial dims), whatever its memory layout.
struct NdTensor {
  std::vector<int64_t> dim, stride;
  bool operator==(const NdTensor&) const = default;
};

struct ConvNdGeometry {
  bool dgrad = false;  // transposed: conv_dgrad, else conv_fprop
  NdTensor x;          // the graph's input: fprop's X, dgrad's DY (the transposed conv's input)
  NdTensor w;          // the filter: fprop (K, C/g, ...), dgrad (C, K/g, ...): PyTorch's weight
  NdTensor y;          // the graph's output: fprop's Y, dgrad's DX (N, K, [O,] P, Q)
  NdTensor bias;       // [1, K, 1, 1(, 1)], K contiguous floats
  std::vector<int64_t> pad, stride, dilation;  // per spatial dim, depth first for 3-D
};

// 2 for conv2d and conv_transpose2d, 3 for conv3d and conv_transpose3d; throws InputError for
// linear/matmul.
[[nodiscard]] int conv_spatial_dims(spec::MainKind kind);

// Packed strides of `dim` (N/K first, C second, spatial after): channels-first (NCHW, NCDHW,
// KCRS) or channels-last (NHWC, NDHWC, KRSC: dim 1 innermost).
[[nodiscard]] std::vector<int64_t> packed_strides(const std::vector<int64_t>& dim, bool channels_last);

// Why cuDNN cannot be given this conv as a graph (nullopt: it can): a 2-D kind with depth,
// channels not divisible by groups, `transposed` not matching the kind, output padding not
// below the stride, a layout other than nchw/nhwc, a non-positive extent.
[[nodiscard]] std::optional<std::string> conv_nd_unsupported(spec::MainKind kind, const spec::Conv& conv,
                                                             spec::Layout layout);

// The geometry for `kind` in `layout` (nchw: every tensor channels-first; nhwc: every tensor
// channels-last, the filter too). Throws InputError where conv_nd_unsupported says why.
[[nodiscard]] ConvNdGeometry conv_nd_geometry(spec::MainKind kind, const spec::Conv& conv, spec::Layout layout);

// The forward conv's output extent along one dim with symmetric padding: what cuDNN's shape
// check computes from dgrad's dx (or fprop's x) to compare with dy (or y).
[[nodiscard]] int64_t forward_extent(int64_t size, int64_t pad, int64_t win, int64_t dil, int64_t stride);

}  // namespace fusetune::worker
