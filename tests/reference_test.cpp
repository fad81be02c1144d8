// The CPU float64 reference: convolution against hand-computed values and an independent
// naive loop, and whole problems (epilogues, reductions, the presets' chains) on tiny shapes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/problem_data.hpp"
#include "spec_builders.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

using spec_builders::conv;
using spec_builders::param;
using spec_builders::scalar;

// Written independently of cpu_reference.cpp: one output at a time, bounds test per tap.
double naive_conv(const spec::Conv& cv, const float* x, const float* w, const float* bias, int64_t n,
                  int64_t k, int64_t p, int64_t q) {
  double acc = bias ? double(bias[k]) : 0.0;
  for (int64_t c = 0; c < cv.c; ++c) {
    for (int64_t r = 0; r < cv.r; ++r) {
      for (int64_t s = 0; s < cv.s; ++s) {
        const int64_t ih = p * cv.stride_h - cv.pad_h + r * cv.dil_h;
        const int64_t iw = q * cv.stride_w - cv.pad_w + s * cv.dil_w;
        if (ih < 0 || ih >= cv.h || iw < 0 || iw >= cv.w) continue;
        acc += double(w[((k * cv.c + c) * cv.r + r) * cv.s + s]) *
               double(x[((n * cv.c + c) * cv.h + ih) * cv.w + iw]);
      }
    }
  }
  return acc;
}

int64_t at(const spec::Conv& cv, int64_t n, int64_t k, int64_t p, int64_t q) {
  return ((n * cv.k + k) * cv.p() + p) * cv.q() + q;
}

TEST(Conv, HandComputed3x3With2x2Kernel) {
  const spec::Conv cv = conv(1, 1, 3, 3, 1, 2, 2);
  const float x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const float w[] = {1, 2, 3, 4};
  // 1*1+2*2+4*3+5*4 = 37, 2+6+15+24 = 47, 4+10+21+32 = 67, 5+12+24+36 = 77
  EXPECT_EQ(conv2d_nchw(cv, x, w, nullptr), (std::vector<double>{37, 47, 67, 77}));
  const float bias[] = {0.5f};
  EXPECT_EQ(conv2d_nchw(cv, x, w, bias), (std::vector<double>{37.5, 47.5, 67.5, 77.5}));
}

// N=2, C=2, H=5, W=7, K=3, 3x3, stride 2, pad 1, dilation 2 -> P=2, Q=3.
// x[n,c,h,w] = 1000n + 100c + 10h + w; w[k,c,r,s] = (k+1)(3r+s+1)(c==0 ? 1 : -0.5).
struct StridedCase {
  spec::Conv cv = [] {
    spec::Conv c = conv(2, 2, 5, 7, 3, 3, 3);
    c.stride_h = c.stride_w = 2;
    c.pad_h = c.pad_w = 1;
    c.dil_h = c.dil_w = 2;
    return c;
  }();
  std::vector<float> x, w;
  std::vector<float> bias{0.5f, -1.0f, 2.0f};
  StridedCase() {
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t h = 0; h < 5; ++h)
          for (int64_t ww = 0; ww < 7; ++ww) x.push_back(float(1000 * n + 100 * c + 10 * h + ww));
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t s = 0; s < 3; ++s)
            w.push_back(float(double((k + 1) * (3 * r + s + 1)) * (c == 0 ? 1.0 : -0.5)));
  }
};

TEST(Conv, StridedPaddedDilatedHandValues) {
  const StridedCase t;
  ASSERT_EQ(t.cv.p(), 2);
  ASSERT_EQ(t.cv.q(), 3);
  const std::vector<double> y = conv2d_nchw(t.cv, t.x.data(), t.w.data(), t.bias.data());
  ASSERT_EQ(y.size(), 2u * 3 * 2 * 3);
  // (n0,k0,p0,q0): rows ih = -1+2r -> r=1,2 (ih 1,3); cols iw = -1+2s -> s=1,2 (iw 1,3).
  //   c0: 5*11 + 6*13 + 8*31 + 9*33 = 678;  c1: -0.5*(5*111 + 6*113 + 8*131 + 9*133) = -1739
  //   678 - 1739 + 0.5 = -1060.5
  EXPECT_EQ(y[size_t(at(t.cv, 0, 0, 0, 0))], -1060.5);
  // (n0,k1,p0,q0): twice the weights, bias -1: -2122 - 1
  EXPECT_EQ(y[size_t(at(t.cv, 0, 1, 0, 0))], -2123.0);
  // (n0,k0,p1,q2): ih = 1+2r -> r=0,1 (ih 1,3); iw = 3+2s -> s=0,1 (iw 3,5).
  //   c0: 1*13 + 2*15 + 4*33 + 5*35 = 350;  c1: -0.5*(113 + 2*115 + 4*133 + 5*135) = -775
  //   350 - 775 + 0.5 = -424.5
  EXPECT_EQ(y[size_t(at(t.cv, 0, 0, 1, 2))], -424.5);
  // n=1 adds 1000 to every tap: (5+6+8+9)*1000*(1 - 0.5) = 14000 -> -1061 + 14000 + 0.5
  EXPECT_EQ(y[size_t(at(t.cv, 1, 0, 0, 0))], 12939.5);
  // (1+2+4+5)*1000*0.5 = 6000 -> -425 + 6000 + 0.5
  EXPECT_EQ(y[size_t(at(t.cv, 1, 0, 1, 2))], 5575.5);
}

TEST(Conv, MatchesNaiveLoopOnAwkwardShapes) {
  struct Shape {
    int64_t n, c, h, w, k, r, s, sh, sw, ph, pw, dh, dw;
  };
  const Shape shapes[] = {
      {2, 2, 5, 7, 3, 3, 3, 2, 2, 1, 1, 2, 2},  // the hand-checked case, random data
      {1, 3, 9, 13, 5, 3, 5, 1, 3, 2, 0, 1, 2}, // rectangular window, mixed strides
      {3, 1, 4, 5, 7, 1, 1, 1, 1, 0, 0, 1, 1},  // 1x1, W not a multiple of 4
      {1, 2, 3, 3, 2, 3, 3, 1, 1, 3, 3, 1, 1},  // padding wider than needed: all-zero borders
  };
  for (const Shape& sh : shapes) {
    spec::Problem pr;
    pr.conv = conv(sh.n, sh.c, sh.h, sh.w, sh.k, sh.r, sh.s);
    pr.conv.stride_h = sh.sh;
    pr.conv.stride_w = sh.sw;
    pr.conv.pad_h = sh.ph;
    pr.conv.pad_w = sh.pw;
    pr.conv.dil_h = sh.dh;
    pr.conv.dil_w = sh.dw;
    const ProblemData d = make_problem_data(pr, 11);
    const spec::Conv& cv = pr.conv;
    const std::vector<double> y = conv2d_nchw(cv, d.x.data(), d.w.data(), d.chan.data());
    ASSERT_EQ(int64_t(y.size()), cv.conv_out_elems());
    for (int64_t n = 0; n < cv.n; ++n)
      for (int64_t k = 0; k < cv.k; ++k)
        for (int64_t p = 0; p < cv.p(); ++p)
          for (int64_t q = 0; q < cv.q(); ++q)
            ASSERT_NEAR(y[size_t(at(cv, n, k, p, q))],
                        naive_conv(cv, d.x.data(), d.w.data(), d.chan.data(), n, k, p, q), 1e-12)
                << n << ' ' << k << ' ' << p << ' ' << q;
  }
}

// Channel reductions on a 1x1 conv whose channel values are known:
// x = {n0: [1, 2], n1: [-1, 4]}, w = {1, -2, 0.5}, bias = {0, 1, -1}
// channels at (n0,q0) {1, -1, -0.5}, (n0,q1) {2, -3, 0}, (n1,q0) {-1, 3, -1.5}, (n1,q1) {4, -7, 1}
spec::Problem reduce_problem(ReduceKind kind) {
  spec::Problem p;
  p.conv = conv(2, 1, 1, 2, 3, 1, 1);
  p.reduce = kind;
  return p;
}
ProblemData reduce_data() { return {{1, 2, -1, 4}, {1, -2, 0.5f}, {0, 1, -1}}; }

TEST(Reference, ChannelReductionsKeepdim) {
  const ProblemData d = reduce_data();
  EXPECT_EQ(reduce_problem(ReduceKind::min).out_elems(), 4);  // (N=2, 1, P=1, Q=2)
  EXPECT_EQ(reference_output(reduce_problem(ReduceKind::min), d), (std::vector<double>{-1, -3, -1.5, -7}));
  EXPECT_EQ(reference_output(reduce_problem(ReduceKind::max), d), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(reference_output(reduce_problem(ReduceKind::sum), d), (std::vector<double>{-0.5, -1, 0.5, -2}));
  const std::vector<double> mean = reference_output(reduce_problem(ReduceKind::mean), d);
  EXPECT_DOUBLE_EQ(mean[0], -0.5 / 3);
  EXPECT_DOUBLE_EQ(mean[3], -2.0 / 3);
}

TEST(Reference, PreOpsWithParamsThenReductionThenPostOps) {
  spec::Problem p = reduce_problem(ReduceKind::max);
  p.num_params = 1;
  p.pre = {{OpKind::add, {param(0)}}};
  p.post = {{OpKind::mul, {scalar(0.5)}}, {OpKind::sub, {scalar(1.0)}}};
  ProblemData d = reduce_data();
  d.chan.insert(d.chan.end(), {10, 0, 0});  // param 0: lifts channel 0 above the others
  // max over channels of {x+10, -2x+1, 0.5x-1} = x+10 -> 0.5(x+10) - 1
  EXPECT_EQ(reference_output(p, d), (std::vector<double>{4.5, 5, 3.5, 6}));
}

TEST(Reference, ElementwiseChainPerChannelOperands) {
  // Same conv, no reduction: out[n,k,0,q] = max(conv, param0[k]) * param1[k]
  spec::Problem p = reduce_problem(ReduceKind::min);
  p.reduce.reset();
  p.num_params = 2;
  p.pre = {{OpKind::max, {param(0)}}, {OpKind::mul, {param(1)}}};
  ProblemData d = reduce_data();
  d.chan.insert(d.chan.end(), {0, 0, 0, 1, 2, 3});
  EXPECT_EQ(p.out_elems(), 12);
  // k0: max(x,0)*1; k1: max(-2x+1,0)*2; k2: max(0.5x-1,0)*3, for n0 [1,2] then n1 [-1,4]
  EXPECT_EQ(reference_output(p, d), (std::vector<double>{1, 2, 0, 0, 0, 0, 0, 4, 6, 0, 0, 3}));
}

TEST(Reference, LayoutWordsDoNotChangeLogicalOutput) {
  spec::Problem p;
  p.conv = conv(2, 3, 6, 5, 4, 3, 3);
  p.pre = {{OpKind::relu, {}}};
  const ProblemData d = make_problem_data(p, 2);
  const std::vector<double> a = reference_output(p, d);
  p.conv.in = spec::Layout::nhwc;
  p.conv.out = spec::Layout::nhwc;
  EXPECT_EQ(reference_output(p, d), a);
}

// kernelbench-31's chain on a tiny shape: conv+bias -> min(0.5) -> + bias2[k] -> * 2.0
TEST(Reference, Kernelbench31ChainTiny) {
  spec::Problem p;
  p.conv = conv(2, 3, 7, 6, 4, 3, 3);
  p.num_params = 1;
  p.pre = {{OpKind::min, {scalar(0.5)}}, {OpKind::add, {param(0)}}, {OpKind::mul, {scalar(2.0)}}};
  const ProblemData d = make_problem_data(p, 31);
  const std::vector<double> y = reference_output(p, d);
  const spec::Conv& cv = p.conv;
  ASSERT_EQ(int64_t(y.size()), cv.n * cv.k * 5 * 4);
  int64_t clamped = 0, passed = 0;
  for (int64_t n = 0; n < cv.n; ++n)
    for (int64_t k = 0; k < cv.k; ++k)
      for (int64_t ph = 0; ph < cv.p(); ++ph)
        for (int64_t q = 0; q < cv.q(); ++q) {
          const double v = naive_conv(cv, d.x.data(), d.w.data(), d.chan.data(), n, k, ph, q);
          (v > 0.5 ? clamped : passed) += 1;
          const double want = (std::min(v, 0.5) + double(d.chan[size_t(cv.k + k)])) * 2.0;
          ASSERT_NEAR(y[size_t(at(cv, n, k, ph, q))], want, 1e-12);
        }
  // The bias placed on the threshold (channel 0 of 4) makes both branches occur.
  EXPECT_GT(clamped, 0);
  EXPECT_GT(passed, 0);
}

// kernelbench-32's chain on a tiny shape: conv+bias -> * 2.0 -> min over channels, keepdim
TEST(Reference, Kernelbench32ChainTiny) {
  spec::Problem p;
  p.conv = conv(2, 3, 6, 9, 5, 3, 3);
  p.pre = {{OpKind::mul, {scalar(2.0)}}};
  p.reduce = ReduceKind::min;
  const ProblemData d = make_problem_data(p, 32);
  const std::vector<double> y = reference_output(p, d);
  const spec::Conv& cv = p.conv;
  ASSERT_EQ(int64_t(y.size()), cv.n * 1 * cv.p() * cv.q());
  for (int64_t n = 0; n < cv.n; ++n)
    for (int64_t ph = 0; ph < cv.p(); ++ph)
      for (int64_t q = 0; q < cv.q(); ++q) {
        double want = INFINITY;
        for (int64_t k = 0; k < cv.k; ++k)
          want = std::min(want, 2.0 * naive_conv(cv, d.x.data(), d.w.data(), d.chan.data(), n, k, ph, q));
        ASSERT_NEAR(y[size_t((n * cv.p() + ph) * cv.q() + q)], want, 1e-12);
      }
}

TEST(Reference, RejectsMismatchedBuffers) {
  spec::Problem p;
  p.conv = conv(1, 2, 4, 4, 3, 3, 3);
  ProblemData d = make_problem_data(p, 1);
  d.x.pop_back();
  EXPECT_THROW((void)reference_output(p, d), InputError);
  d = make_problem_data(p, 1);
  p.conv.bias = false;  // chan now expected empty
  EXPECT_THROW((void)reference_output(p, d), InputError);
}

TEST(Reference, SmallShapeIsFast) {
  spec::Problem p;
  p.conv = conv(2, 8, 32, 32, 16, 3, 3);
  p.conv.pad_h = p.conv.pad_w = 1;
  p.pre = {{OpKind::gelu, {}}};
  p.reduce = ReduceKind::mean;
  const ProblemData d = make_problem_data(p, 9);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> y = reference_output(p, d);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(y.size(), 2u * 32 * 32);
  EXPECT_LT(s, 0.5);
}

}  // namespace
}  // namespace fusetune::reference
