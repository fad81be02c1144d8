#include "reference/model_main.hpp"

#include <cstddef>

#include "reference/parallel.hpp"

namespace fusetune::reference::detail {
namespace {

// Input index along one dim read by output `out` through tap `tap`, or -1 outside the input.
// Forward: in = out*stride - pad + tap*dil. Transposed (the forward conv's gradient):
// out = in*stride - pad + tap*dil, so in = (out + pad - tap*dil) / stride where that divides.
int64_t source(bool transposed, int64_t out, int64_t tap, int64_t size, int64_t stride, int64_t pad, int64_t dil) {
  int64_t in = 0;
  if (transposed) {
    const int64_t num = out + pad - tap * dil;
    if (num < 0 || num % stride != 0) return -1;
    in = num / stride;
  } else {
    in = out * stride - pad + tap * dil;
  }
  return in >= 0 && in < size ? in : -1;
}

// One output plane (image n, channel k): O*P*Q values.
void conv_plane(const spec::Conv& cv, const float* x, const float* w, const float* bias, int64_t n, int64_t k,
                double* out) {
  const int64_t O = cv.o(), P = cv.p(), Q = cv.q();
  const int64_t cg = cv.c / cv.groups, kg = cv.k / cv.groups;
  const int64_t g = k / kg;
  const int64_t taps = cv.t * cv.r * cv.s;
  for (int64_t o = 0; o < O; ++o) {
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t q = 0; q < Q; ++q) {
        double acc = bias != nullptr ? double(bias[k]) : 0.0;
        for (int64_t t = 0; t < cv.t; ++t) {
          const int64_t id = source(cv.transposed, o, t, cv.d, cv.stride_d, cv.pad_d, cv.dil_d);
          if (id < 0) continue;
          for (int64_t r = 0; r < cv.r; ++r) {
            const int64_t ih = source(cv.transposed, p, r, cv.h, cv.stride_h, cv.pad_h, cv.dil_h);
            if (ih < 0) continue;
            for (int64_t s = 0; s < cv.s; ++s) {
              const int64_t iw = source(cv.transposed, q, s, cv.w, cv.stride_w, cv.pad_w, cv.dil_w);
              if (iw < 0) continue;
              const int64_t tap = (t * cv.r + r) * cv.s + s;
              for (int64_t cc = 0; cc < cg; ++cc) {
                const int64_t c = g * cg + cc;
                // forward (K, C/g, taps); transposed (C, K/g, taps)
                const int64_t wi = cv.transposed ? (c * kg + k % kg) * taps + tap : (k * cg + cc) * taps + tap;
                const int64_t xi = (((n * cv.c + c) * cv.d + id) * cv.h + ih) * cv.w + iw;
                acc += double(w[wi]) * double(x[xi]);
              }
            }
          }
        }
        out[(o * P + p) * Q + q] = acc;
      }
    }
  }
}

}  // namespace

std::vector<double> conv_any(const spec::Conv& cv, const float* x, const float* w, const float* bias_or_null) {
  const int64_t plane = cv.o() * cv.p() * cv.q();
  std::vector<double> out(std::size_t(cv.n * cv.k * plane));
  const double work = double(plane) * double(cv.c / cv.groups * cv.t * cv.r * cv.s);
  parallel_for(cv.n * cv.k, work, [&](int64_t nk) {
    conv_plane(cv, x, w, bias_or_null, nk / cv.k, nk % cv.k, out.data() + nk * plane);
  });
  return out;
}

std::vector<double> gemm_any(const spec::Gemm& g, bool linear, const float* a, const float* b,
                             const float* bias_or_null) {
  const int64_t M = g.m, N = g.n, K = g.k;
  std::vector<double> out(std::size_t(g.batch * M * N));
  for (int64_t bt = 0; bt < g.batch; ++bt) {
    const float* ab = a + bt * M * K;
    const float* bb = b + bt * K * N;
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        double acc = bias_or_null != nullptr ? double(bias_or_null[n]) : 0.0;
        for (int64_t k = 0; k < K; ++k) {
          const double av = ab[!linear && g.trans_a ? k * M + m : m * K + k];
          // linear's W is (N, K), as a matmul B with trans_b
          const double bv = bb[linear || g.trans_b ? n * K + k : k * N + n];
          acc += av * bv;
        }
        out[std::size_t((bt * M + m) * N + n)] = acc;
      }
    }
  }
  return out;
}

}  // namespace fusetune::reference::detail
