// The GPU-free half of the cuDNN graphs for every conv kind (worker/conv_nd_shape.hpp): the dims
// and strides each tensor is given in each layout, the dgrad mapping of a transposed conv and the
// output shape it implies, checked against spec::Conv's o()/p()/q() and PyTorch's weight shapes;
// and cuDNN's own definition of fprop and dgrad, evaluated on the CPU through those dims and
// strides, against the float64 reference (reference/model_main.hpp): if the mapping is right
// there, a cuDNN that computes its definition computes the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "conv_nd_test_support.hpp"
#include "reference/model_main.hpp"
#include "worker/conv_nd_graph.hpp"
#include "worker/conv_nd_shape.hpp"

namespace {

using fusetune::spec::Conv;
using fusetune::spec::Layout;
using fusetune::spec::MainKind;
using fusetune::worker::ConvNdGeometry;
using fusetune::worker::NdTensor;

struct Case {
  const char* name;
  MainKind kind;
  Conv conv;
};

Conv conv2d(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s) {
  Conv cv;
  cv.n = n, cv.c = c, cv.h = h, cv.w = w, cv.k = k, cv.r = r, cv.s = s;
  return cv;
}

Conv conv3d(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w, int64_t k, int64_t t, int64_t r, int64_t s) {
  Conv cv = conv2d(n, c, h, w, k, r, s);
  cv.d = d, cv.t = t;
  return cv;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  out.push_back({"conv2d plain", MainKind::conv2d, conv2d(2, 3, 7, 6, 5, 3, 3)});
  {
    Conv c = conv2d(1, 4, 9, 8, 6, 3, 2);
    c.stride_h = 2, c.pad_h = 1, c.pad_w = 2, c.dil_w = 2, c.groups = 2;
    out.push_back({"conv2d stride/pad/dil/groups per dim", MainKind::conv2d, c});
  }
  {
    Conv c = conv3d(2, 4, 5, 6, 7, 6, 3, 3, 3);
    c.stride_d = 2, c.pad_d = 1, c.pad_h = 1, c.pad_w = 1, c.dil_h = 2, c.groups = 2;
    out.push_back({"conv3d stride 2x1x1 pad dil groups 2", MainKind::conv3d, c});
  }
  {
    Conv c = conv2d(2, 4, 5, 6, 6, 3, 3);
    c.transposed = true, c.stride_h = c.stride_w = 2, c.pad_h = c.pad_w = 1, c.out_pad_h = c.out_pad_w = 1;
    c.groups = 2;
    out.push_back({"conv_transpose2d s2 p1 op1 g2", MainKind::conv_transpose2d, c});
  }
  {
    Conv c = conv3d(1, 3, 3, 4, 5, 4, 3, 3, 3);
    c.transposed = true, c.stride_d = c.stride_h = c.stride_w = 2, c.pad_d = c.pad_h = c.pad_w = 1;
    c.out_pad_d = c.out_pad_h = c.out_pad_w = 1;
    out.push_back({"conv_transpose3d s2 p1 op1", MainKind::conv_transpose3d, c});
  }
  {
    Conv c = conv3d(1, 6, 2, 3, 4, 3, 2, 3, 1);
    c.transposed = true, c.stride_d = 3, c.stride_h = 2, c.out_pad_d = 2, c.dil_h = 2, c.pad_h = 1, c.groups = 3;
    out.push_back({"conv_transpose3d stride 3, out_pad 2, dil, groups 3 (depthwise-like)", MainKind::conv_transpose3d, c});
  }
  return out;
}

std::vector<int64_t> spatial_out(MainKind kind, const Conv& c) {
  if (fusetune::worker::conv_spatial_dims(kind) == 3) return {c.o(), c.p(), c.q()};
  return {c.p(), c.q()};
}

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(ConvNdGraphShape, DimsMatchTheSpecAndPyTorchWeights) {
  for (const Case& tc : cases()) {
    SCOPED_TRACE(tc.name);
    const Conv& c = tc.conv;
    const bool three = fusetune::worker::conv_spatial_dims(tc.kind) == 3;
    const std::vector<int64_t> in_sp = three ? std::vector<int64_t>{c.d, c.h, c.w} : std::vector<int64_t>{c.h, c.w};
    const std::vector<int64_t> win = three ? std::vector<int64_t>{c.t, c.r, c.s} : std::vector<int64_t>{c.r, c.s};
    for (Layout layout : {Layout::nchw, Layout::nhwc}) {
      const ConvNdGeometry g = fusetune::worker::conv_nd_geometry(tc.kind, c, layout);
      EXPECT_EQ(g.dgrad, c.transposed);
      EXPECT_EQ(g.x.dim, cat({c.n, c.c}, in_sp));
      EXPECT_EQ(g.y.dim, cat({c.n, c.k}, spatial_out(tc.kind, c)));
      // PyTorch's weight: conv (K, C/g, ...), transposed (C, K/g, ...), as stored.
      EXPECT_EQ(g.w.dim, c.transposed ? cat({c.c, c.k / c.groups}, win) : cat({c.k, c.c / c.groups}, win));
      EXPECT_EQ(conv_nd_test::elems(g.w), c.weight_elems());
      EXPECT_EQ(conv_nd_test::elems(g.x), c.input_elems());
      EXPECT_EQ(conv_nd_test::elems(g.y), c.conv_out_elems());
      EXPECT_EQ(g.bias.dim, cat({1, c.k}, std::vector<int64_t>(in_sp.size(), 1)));
      EXPECT_EQ(g.pad.size(), in_sp.size());
      // What cuDNN infers: the group count from the channel dims, and the shape check it runs
      // (forward conv of the larger side gives the smaller side).
      const NdTensor& fwd_in = c.transposed ? g.y : g.x;
      const NdTensor& fwd_out = c.transposed ? g.x : g.y;
      EXPECT_EQ(fwd_in.dim[1] / g.w.dim[1], c.groups);
      EXPECT_EQ(fwd_in.dim[1] % g.w.dim[1], 0);
      EXPECT_EQ(fwd_out.dim[1], g.w.dim[0]);
      for (size_t i = 0; i < g.pad.size(); ++i) {
        EXPECT_EQ(fusetune::worker::forward_extent(fwd_in.dim[i + 2], g.pad[i], g.w.dim[i + 2], g.dilation[i],
                                                   g.stride[i]),
                  fwd_out.dim[i + 2])
            << "dim " << i;
      }
      // Every tensor packed: the strides are a permutation of the running products.
      for (const NdTensor* t : {&g.x, &g.w, &g.y, &g.bias}) {
        int64_t max_off = 0;
        for (size_t i = 0; i < t->dim.size(); ++i) max_off += (t->dim[i] - 1) * t->stride[i];
        EXPECT_EQ(max_off + 1, conv_nd_test::elems(*t));
        if (layout == Layout::nhwc) {
          EXPECT_EQ(t->stride[1], 1);
        } else {
          EXPECT_EQ(t->stride.back(), 1);
        }
      }
    }
  }
}

TEST(ConvNdGraphShape, ExplicitValues) {
  Conv c = conv2d(2, 4, 5, 6, 6, 3, 3);
  c.transposed = true, c.stride_h = c.stride_w = 2, c.pad_h = c.pad_w = 1, c.out_pad_h = c.out_pad_w = 1, c.groups = 2;
  const ConvNdGeometry g = fusetune::worker::conv_nd_geometry(MainKind::conv_transpose2d, c, Layout::nchw);
  // P = (5-1)*2 - 2 + 2 + 1 + 1 = 10, Q = (6-1)*2 - 2 + 2 + 1 + 1 = 12 (PyTorch's formula).
  EXPECT_EQ(g.y.dim, (std::vector<int64_t>{2, 6, 10, 12}));
  EXPECT_EQ(g.y.stride, (std::vector<int64_t>{720, 120, 12, 1}));
  EXPECT_EQ(g.w.dim, (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_EQ(g.w.stride, (std::vector<int64_t>{27, 9, 3, 1}));
  const ConvNdGeometry l = fusetune::worker::conv_nd_geometry(MainKind::conv_transpose2d, c, Layout::nhwc);
  EXPECT_EQ(l.x.stride, (std::vector<int64_t>{120, 1, 24, 4}));  // N H W C
  EXPECT_EQ(l.w.stride, (std::vector<int64_t>{27, 1, 9, 3}));    // C R S K/g
  EXPECT_EQ(l.bias.stride, (std::vector<int64_t>{6, 1, 6, 6}));
  Conv d = conv3d(1, 2, 3, 4, 5, 7, 1, 1, 1);
  const ConvNdGeometry v = fusetune::worker::conv_nd_geometry(MainKind::conv3d, d, Layout::nhwc);
  EXPECT_EQ(v.y.stride, (std::vector<int64_t>{420, 1, 140, 35, 7}));  // N D H W K
  EXPECT_EQ(v.x.stride, (std::vector<int64_t>{120, 1, 40, 10, 2}));
}

TEST(ConvNdGraphShape, UnmappableConvsSayWhyAndTheGraphRefusesThemWithoutCuda) {
  struct Bad {
    MainKind kind;
    Conv conv;
    Layout layout;
    const char* says;
  };
  Conv op = conv2d(1, 2, 4, 4, 2, 3, 3);
  op.transposed = true, op.out_pad_h = 1, op.dil_h = 2;  // PyTorch takes it (op < dil); cuDNN's check does not
  Conv groups = conv2d(1, 3, 4, 4, 4, 3, 3);
  groups.groups = 2;
  Conv deep = conv3d(1, 2, 2, 4, 4, 2, 1, 3, 3);
  Conv fwd_op = conv2d(1, 2, 4, 4, 2, 3, 3);
  fwd_op.out_pad_w = 1;
  for (const Bad& b : {Bad{MainKind::conv_transpose2d, op, Layout::nchw, "output padding 1 not below the stride 1"},
                       Bad{MainKind::conv2d, groups, Layout::nchw, "groups 2 do not divide"},
                       Bad{MainKind::conv2d, deep, Layout::nchw, "depth fields"},
                       Bad{MainKind::conv_transpose2d, conv2d(1, 2, 4, 4, 2, 3, 3), Layout::nchw, "transposed"},
                       Bad{MainKind::conv2d, conv2d(1, 2, 4, 4, 2, 3, 3), Layout::any, "nchw or nhwc"},
                       Bad{MainKind::conv2d, conv2d(1, 2, 2, 2, 2, 3, 3), Layout::nchw, "output extent is 0"},
                       Bad{MainKind::conv2d, fwd_op, Layout::nchw, "output padding on a forward conv"}}) {
    const auto why = fusetune::worker::conv_nd_unsupported(b.kind, b.conv, b.layout);
    ASSERT_TRUE(why.has_value()) << b.says;
    EXPECT_NE(why->find(b.says), std::string::npos) << *why;
    EXPECT_THROW((void)fusetune::worker::conv_nd_geometry(b.kind, b.conv, b.layout), fusetune::InputError);
    // The graph refuses before any cuDNN call, so a null handle is never used.
    fusetune::worker::ConvNdDesc desc;
    desc.kind = b.kind, desc.conv = b.conv, desc.layout = b.layout;
    try {
      fusetune::worker::ConvNdGraph graph(nullptr, desc);
      ADD_FAILURE() << "not refused: " << b.says;
    } catch (const fusetune::worker::GraphRefused& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)fusetune::worker::conv_spatial_dims(MainKind::linear), fusetune::InputError);
}

// cuDNN's definitions, read through the geometry's dims and strides (memory order):
//   fprop  y[n,k,o] = sum_{c in k's group, tap} x[n,c, o*stride - pad + tap*dil] w[k, c mod C/g, tap]
//   dgrad dx[n,k,o] = sum_{c in k's group, tap, i*stride = o + pad - tap*dil} dy[n,c,i] w[c, k mod K/g, tap]
// with the groups cuDNN infers from the channel dims.
std::vector<double> cudnn_definition(const ConvNdGeometry& g, const std::vector<float>& x_mem,
                                     const std::vector<float>& w_mem) {
  const size_t sd = g.pad.size();
  const NdTensor& y = g.y;
  const int64_t groups = g.dgrad ? y.dim[1] / g.w.dim[1] : g.x.dim[1] / g.w.dim[1];
  const int64_t kg = y.dim[1] / groups, cg = g.x.dim[1] / groups;
  std::vector<double> out(size_t(conv_nd_test::elems(y)));
  std::vector<int64_t> oi(sd), tap(sd), ii(sd);
  int64_t taps = 1;
  for (size_t d = 0; d < sd; ++d) taps *= g.w.dim[d + 2];
  for (int64_t e = 0; e < int64_t(out.size()); ++e) {
    int64_t rest = e;
    for (size_t d = sd; d-- > 0;) {
      oi[d] = rest % y.dim[d + 2];
      rest /= y.dim[d + 2];
    }
    const int64_t k = rest % y.dim[1], n = rest / y.dim[1];
    double acc = 0.0;
    for (int64_t cc = 0; cc < cg; ++cc) {
      const int64_t c = (k / kg) * cg + cc;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t tr = t;
        for (size_t d = sd; d-- > 0;) {
          tap[d] = tr % g.w.dim[d + 2];
          tr /= g.w.dim[d + 2];
        }
        bool inside = true;
        for (size_t d = 0; d < sd && inside; ++d) {
          if (g.dgrad) {
            const int64_t num = oi[d] + g.pad[d] - tap[d] * g.dilation[d];
            inside = num >= 0 && num % g.stride[d] == 0;
            ii[d] = num / g.stride[d];
          } else {
            ii[d] = oi[d] * g.stride[d] - g.pad[d] + tap[d] * g.dilation[d];
          }
          inside = inside && ii[d] >= 0 && ii[d] < g.x.dim[d + 2];
        }
        if (!inside) continue;
        int64_t xo = n * g.x.stride[0] + c * g.x.stride[1];
        int64_t wo = g.dgrad ? c * g.w.stride[0] + (k % kg) * g.w.stride[1] : k * g.w.stride[0] + cc * g.w.stride[1];
        for (size_t d = 0; d < sd; ++d) {
          xo += ii[d] * g.x.stride[d + 2];
          wo += tap[d] * g.w.stride[d + 2];
        }
        acc += double(x_mem[size_t(xo)]) * double(w_mem[size_t(wo)]);
      }
    }
    out[size_t(conv_nd_test::offset(y, e))] = acc;
  }
  return out;
}

TEST(ConvNdGraphShape, CudnnsDefinitionThroughTheMappingIsTheReference) {
  for (const Case& tc : cases()) {
    for (Layout layout : {Layout::nchw, Layout::nhwc}) {
      SCOPED_TRACE(std::string(tc.name) + (layout == Layout::nhwc ? " nhwc" : " nchw"));
      const ConvNdGeometry g = fusetune::worker::conv_nd_geometry(tc.kind, tc.conv, layout);
      const std::vector<float> x = conv_nd_test::draw(size_t(tc.conv.input_elems()), 7, 0);
      const std::vector<float> w = conv_nd_test::draw(size_t(tc.conv.weight_elems()), 7, 1);
      const std::vector<double> ref = fusetune::reference::detail::conv_any(tc.conv, x.data(), w.data(), nullptr);
      const std::vector<double> got =
          conv_nd_test::to_logical(cudnn_definition(g, conv_nd_test::to_memory(x, g.x), conv_nd_test::to_memory(w, g.w)), g.y);
      ASSERT_EQ(got.size(), ref.size());
      int bad = 0;
      for (size_t i = 0; i < ref.size(); ++i) {
        if (!(std::fabs(got[i] - ref[i]) <= 1e-12) && ++bad <= 5) {
          ADD_FAILURE() << "at " << i << ": " << got[i] << " vs " << ref[i];
        }
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

}  // namespace
