#include "reference/cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.hpp"
#include "reference/bounds.hpp"
#include "reference/op_math.hpp"
#include "reference/parallel.hpp"
#include "reference/problem_check.hpp"

namespace fusetune::reference {
namespace {

// First and one-past-last output index o with 0 <= o*stride - pad + tap < extent, so the
// inner loop runs without bounds checks (zero padding contributes nothing).
struct Range {
  int64_t lo, hi;
};
Range valid_outputs(int64_t out_extent, int64_t in_extent, int64_t stride, int64_t pad, int64_t tap) {
  // o*stride >= pad - tap  and  o*stride <= in_extent - 1 + pad - tap
  const int64_t need = pad - tap;
  const int64_t lo = need <= 0 ? 0 : (need + stride - 1) / stride;
  const int64_t last = in_extent - 1 + pad - tap;
  const int64_t hi = last < 0 ? 0 : std::min(out_extent, last / stride + 1);
  return {lo, std::max(lo, hi)};
}

// The conv loop, written once: calls tap(i, x * w) (in double, exact for fp32 inputs) for
// every in-bounds pair of output pixel i of plane (image n, channel k) and filter tap
// (c, r, s). Each output sees its taps in (r, s, c) order. For a fixed tap the weight is fixed
// and the plane update is a strided axpy, which vectorizes once `tap` is inlined.
template <typename Tap>
void for_each_tap(const spec::Conv& cv, const float* x, const float* w, int64_t n, int64_t k, Tap&& tap) {
  const int64_t P = cv.p(), Q = cv.q();
  for (int64_t r = 0; r < cv.r; ++r) {
    const Range pr = valid_outputs(P, cv.h, cv.stride_h, cv.pad_h, r * cv.dil_h);
    for (int64_t s = 0; s < cv.s; ++s) {
      const Range qr = valid_outputs(Q, cv.w, cv.stride_w, cv.pad_w, s * cv.dil_w);
      const int64_t iw0 = -cv.pad_w + s * cv.dil_w;
      for (int64_t c = 0; c < cv.c; ++c) {
        const double wv = w[((k * cv.c + c) * cv.r + r) * cv.s + s];
        const float* xc = x + (n * cv.c + c) * cv.h * cv.w;
        for (int64_t p = pr.lo; p < pr.hi; ++p) {
          const float* xrow = xc + (p * cv.stride_h - cv.pad_h + r * cv.dil_h) * cv.w;
          const int64_t o = p * Q;
          for (int64_t q = qr.lo; q < qr.hi; ++q) tap(o + q, wv * double(xrow[q * cv.stride_w + iw0]));
        }
      }
    }
  }
}

// One output plane (image n, channel k): bias plus the sum of the taps.
void conv_plane(const spec::Conv& cv, const float* x, const float* w, const float* bias, int64_t n,
                int64_t k, double* out) {
  std::fill(out, out + cv.p() * cv.q(), bias ? double(bias[k]) : 0.0);
  for_each_tap(cv, x, w, n, k, [out](int64_t i, double prod) { out[i] += prod; });
}

// conv_plane for the TF32 rule: y, A = sum |x w| and B = sum (x w)^2 of one plane, in double
// (each fp32 product is exact in double).
void conv_plane_bounds(const spec::Conv& cv, const float* x, const float* w, int64_t n, int64_t k, double* y,
                       double* a, double* b) {
  const int64_t plane = cv.p() * cv.q();
  std::fill(y, y + plane, 0.0);
  std::fill(a, a + plane, 0.0);
  std::fill(b, b + plane, 0.0);
  for_each_tap(cv, x, w, n, k, [y, a, b](int64_t i, double prod) {
    y[i] += prod;
    a[i] += std::fabs(prod);
    b[i] += prod * prod;
  });
}

// One plane's conv-alone answer as the GPU conv kernel leaves it: E0 and V0 rounded up to fp32.
void conv_plane_bounded(const spec::Conv& cv, const float* x, const float* w, int64_t n, int64_t k,
                        Bounded* out, MathMode math) {
  const int64_t plane = cv.p() * cv.q();
  const auto n_plane = static_cast<size_t>(plane);
  std::vector<double> y(n_plane), a(n_plane), b(n_plane);
  conv_plane_bounds(cv, x, w, n, k, y.data(), a.data(), b.data());
  const int64_t crs = cv.c * cv.r * cv.s;
  for (int64_t i = 0; i < plane; ++i) {
    const Bounded c = conv_bounded(y[size_t(i)], a[size_t(i)], b[size_t(i)], crs, math);
    out[i] = {c.v, double(store_bound(c.e)), double(store_bound(c.var))};
  }
}

void store(const Bounded& x, size_t i, BoundedReference& out) {
  out.values[i] = x.v;
  out.bound[i] = store_bound(x.e);
  out.var[i] = store_bound(x.var);
}

double plane_work(const spec::Conv& cv) { return double(cv.p() * cv.q() * cv.c * cv.r * cv.s); }

void expect_size(const char* what, size_t have, int64_t want) {
  if (int64_t(have) != want) {
    throw InputError(std::string("reference: ") + what + " has " + std::to_string(have) +
                     " elements, expected " + std::to_string(want));
  }
}

// Per-channel parameters transposed to [k][param], so apply_op gets one channel's row.
std::vector<double> params_by_channel(const spec::Problem& p, const ProblemData& d) {
  const auto np = size_t(p.num_params);
  std::vector<double> t(size_t(p.conv.k) * np);
  for (size_t i = 0; i < np; ++i) {
    const int64_t base = chan_index(p, int(i));
    for (int64_t k = 0; k < p.conv.k; ++k) t[size_t(k) * np + i] = d.chan[size_t(base + k)];
  }
  return t;
}

double apply_chain(const std::vector<spec::Op>& ops, double v, const double* chan_k) {
  for (const spec::Op& op : ops) v = apply_op(op, v, chan_k);
  return v;
}

BoundedReference sized(size_t count) {
  BoundedReference r;
  r.values.resize(count);
  r.bound.resize(count);
  r.var.resize(count);
  return r;
}

}  // namespace

std::vector<double> conv2d_nchw(const spec::Conv& cv, const float* x, const float* w,
                                const float* bias_or_null) {
  spec::Problem just_conv;
  just_conv.conv = cv;
  check_problem(just_conv);  // extents that would index out of bounds
  const int64_t plane = cv.p() * cv.q();
  std::vector<double> out(size_t(cv.conv_out_elems()));
  detail::parallel_for(cv.n * cv.k, plane_work(cv), [&](int64_t nk) {
    conv_plane(cv, x, w, bias_or_null, nk / cv.k, nk % cv.k, out.data() + nk * plane);
  });
  return out;
}

std::vector<double> reference_output(const spec::Problem& p, const ProblemData& d) {
  check_problem(p);
  const spec::Conv& cv = p.conv;
  expect_size("x", d.x.size(), cv.input_elems());
  expect_size("w", d.w.size(), cv.weight_elems());
  expect_size("chan", d.chan.size(), chan_elems(p));
  const float* bias = cv.bias ? d.chan.data() : nullptr;
  const std::vector<double> params = params_by_channel(p, d);
  const auto np = size_t(p.num_params);
  const int64_t K = cv.k, plane = cv.p() * cv.q();

  auto conv_and_pre = [&](int64_t n, int64_t k, double* dst) {
    conv_plane(cv, d.x.data(), d.w.data(), bias, n, k, dst);
    const double* chan_k = params.data() + size_t(k) * np;
    for (int64_t i = 0; i < plane; ++i) dst[i] = apply_chain(p.pre, dst[i], chan_k);
  };

  if (!p.reduce) {
    std::vector<double> out(size_t(p.out_elems()));
    detail::parallel_for(cv.n * K, plane_work(cv), [&](int64_t nk) {
      double* dst = out.data() + nk * plane;
      conv_and_pre(nk / K, nk % K, dst);
      for (int64_t i = 0; i < plane; ++i) dst[i] = apply_chain(p.post, dst[i], nullptr);
    });
    return out;
  }

  // With a reduction, one image's K planes at a time bounds memory at K*P*Q doubles.
  const spec::ReduceKind rk = *p.reduce;
  std::vector<double> out(size_t(p.out_elems()));
  std::vector<double> planes(size_t(K * plane));
  for (int64_t n = 0; n < cv.n; ++n) {
    detail::parallel_for(K, plane_work(cv), [&](int64_t k) { conv_and_pre(n, k, planes.data() + k * plane); });
    for (int64_t i = 0; i < plane; ++i) {
      double acc = reduce_init(rk);
      for (int64_t k = 0; k < K; ++k) acc = reduce_step(rk, acc, planes[size_t(k * plane + i)]);
      out[size_t(n * plane + i)] = apply_chain(p.post, reduce_finish(rk, acc, K), nullptr);
    }
  }
  return out;
}

BoundedReference conv_with_bounds(const spec::Conv& cv, const float* x, const float* w, MathMode math) {
  spec::Problem just_conv;
  just_conv.conv = cv;
  check_problem(just_conv);
  const int64_t plane = cv.p() * cv.q();
  BoundedReference out = sized(size_t(cv.conv_out_elems()));
  detail::parallel_for(cv.n * cv.k, 3.0 * plane_work(cv), [&](int64_t nk) {
    std::vector<Bounded> conv(static_cast<size_t>(plane));
    conv_plane_bounded(cv, x, w, nk / cv.k, nk % cv.k, conv.data(), math);
    for (int64_t i = 0; i < plane; ++i) store(conv[size_t(i)], size_t(nk * plane + i), out);
  });
  return out;
}

BoundedReference reference_with_bounds(const spec::Problem& p, const ProblemData& d, MathMode math) {
  check_problem(p);
  const spec::Conv& cv = p.conv;
  expect_size("x", d.x.size(), cv.input_elems());
  expect_size("w", d.w.size(), cv.weight_elems());
  expect_size("chan", d.chan.size(), chan_elems(p));
  const std::vector<double> params = params_by_channel(p, d);
  const auto np = size_t(p.num_params);
  const int64_t K = cv.k, plane = cv.p() * cv.q();

  // conv -> bias -> pre ops for plane (n, k), as ref_epilogue.cu runs them.
  auto conv_and_pre = [&](int64_t n, int64_t k, Bounded* dst) {
    conv_plane_bounded(cv, d.x.data(), d.w.data(), n, k, dst, math);
    const double* chan_k = params.data() + size_t(k) * np;
    for (int64_t i = 0; i < plane; ++i) {
      if (cv.bias) add_bias_bounded(dst[i], double(d.chan[size_t(k)]));
      for (const spec::Op& op : p.pre) apply_op_bounded(op, dst[i], chan_k);
    }
  };
  auto post = [&](Bounded& x) {
    for (const spec::Op& op : p.post) apply_op_bounded(op, x, nullptr);
  };

  BoundedReference out = sized(size_t(p.out_elems()));
  if (!p.reduce) {
    detail::parallel_for(cv.n * K, 3.0 * plane_work(cv), [&](int64_t nk) {
      std::vector<Bounded> planes(static_cast<size_t>(plane));
      conv_and_pre(nk / K, nk % K, planes.data());
      for (int64_t i = 0; i < plane; ++i) {
        post(planes[size_t(i)]);
        store(planes[size_t(i)], size_t(nk * plane + i), out);
      }
    });
    return out;
  }

  std::vector<Bounded> planes(size_t(K * plane));
  std::vector<Bounded> pixel(static_cast<size_t>(K));
  for (int64_t n = 0; n < cv.n; ++n) {
    detail::parallel_for(K, 3.0 * plane_work(cv), [&](int64_t k) { conv_and_pre(n, k, planes.data() + k * plane); });
    for (int64_t i = 0; i < plane; ++i) {
      for (int64_t k = 0; k < K; ++k) pixel[size_t(k)] = planes[size_t(k * plane + i)];
      Bounded r = reduce_bounded(*p.reduce, pixel, math);
      post(r);
      store(r, size_t(n * plane + i), out);
    }
  }
  return out;
}

}  // namespace fusetune::reference
