#include "reference/model_main.hpp"

#include <cmath>
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

// One output plane (image n, channel k): O*P*Q values, and with `terms` each output's A, B and
// term count at the same offsets.
void conv_plane(const spec::Conv& cv, const float* x, const float* w, const float* bias, int64_t n, int64_t k,
                double* out, MainTerms* terms, int64_t offset) {
  const int64_t O = cv.o(), P = cv.p(), Q = cv.q();
  const int64_t cg = cv.c / cv.groups, kg = cv.k / cv.groups;
  const int64_t g = k / kg;
  const int64_t taps = cv.t * cv.r * cv.s;
  for (int64_t o = 0; o < O; ++o) {
    for (int64_t p = 0; p < P; ++p) {
      for (int64_t q = 0; q < Q; ++q) {
        double acc = bias != nullptr ? double(bias[k]) : 0.0;
        double a = 0.0, b = 0.0;
        int64_t count = 0;
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
                const double term = double(w[wi]) * double(x[xi]);  // exact: fp32 * fp32
                acc += term;
                a += std::fabs(term);
                b += term * term;
                ++count;
              }
            }
          }
        }
        const int64_t at = (o * P + p) * Q + q;
        out[at] = acc;
        if (terms != nullptr) {
          const auto i = std::size_t(offset + at);
          terms->y[i] = acc - (bias != nullptr ? double(bias[k]) : 0.0);
          terms->a[i] = a;
          terms->b[i] = b;
          terms->n[i] = count;
        }
      }
    }
  }
}

}  // namespace

std::vector<double> conv_any(const spec::Conv& cv, const float* x, const float* w, const float* bias_or_null,
                             MainTerms* terms) {
  const int64_t plane = cv.o() * cv.p() * cv.q();
  std::vector<double> out(std::size_t(cv.n * cv.k * plane));
  if (terms != nullptr) terms->resize(out.size());
  const double work = double(plane) * double(cv.c / cv.groups * cv.t * cv.r * cv.s);
  parallel_for(cv.n * cv.k, work, [&](int64_t nk) {
    conv_plane(cv, x, w, bias_or_null, nk / cv.k, nk % cv.k, out.data() + nk * plane, terms, nk * plane);
  });
  return out;
}

std::vector<double> gemm_any(const spec::Gemm& g, bool linear, const float* a, const float* b,
                             const float* bias_or_null, MainTerms* terms) {
  const int64_t M = g.m, N = g.n, K = g.k;
  std::vector<double> out(std::size_t(g.batch * M * N));
  if (terms != nullptr) terms->resize(out.size());
  // One row (batch, m) per item, over all cores (the worker's CPU reference, model_answer.hpp).
  parallel_for(g.batch * M, double(N) * double(K), [&](int64_t row) {
    const int64_t bt = row / M, m = row % M;
    const float* ab = a + bt * M * K;
    const float* bb = b + bt * K * N;
    {
      for (int64_t n = 0; n < N; ++n) {
        double acc = bias_or_null != nullptr ? double(bias_or_null[n]) : 0.0;
        double sum_abs = 0.0, sum_sq = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          const double av = ab[!linear && g.trans_a ? k * M + m : m * K + k];
          // linear's W is (N, K), as a matmul B with trans_b
          const double bv = bb[linear || g.trans_b ? n * K + k : k * N + n];
          acc += av * bv;
          sum_abs += std::fabs(av * bv);
          sum_sq += (av * bv) * (av * bv);
        }
        const auto at = std::size_t((bt * M + m) * N + n);
        out[at] = acc;
        if (terms != nullptr) {
          terms->y[at] = acc - (bias_or_null != nullptr ? double(bias_or_null[n]) : 0.0);
          terms->a[at] = sum_abs;
          terms->b[at] = sum_sq;
          terms->n[at] = K;
        }
      }
    }
  });
  return out;
}

MainTerms main_terms(const spec::Problem& p, const ModelData& d) {
  MainTerms terms;
  if (p.is_conv()) {
    (void)conv_any(p.conv, d.input.data(), d.weight.data(), nullptr, &terms);
  } else {
    (void)gemm_any(p.gemm, p.main == spec::MainKind::linear, d.input.data(), d.weight.data(), nullptr, &terms);
  }
  return terms;
}

}  // namespace fusetune::reference::detail
