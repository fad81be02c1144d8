#pragma once
// The main operators of problem model v2 in float64 on the CPU (small shapes): every conv
// kind as PyTorch's F.conv2d/conv3d/conv_transpose2d/conv_transpose3d, and F.linear /
// torch.matmul. Buffers are in logical (channels-first) order; layout words are ignored.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference::detail {

// Per output, what the TF32 rule needs of its sum (docs/verification.md, "The convolution"):
// the sum without the bias y, A = sum |terms|, B = sum terms^2 and the number of terms.
struct MainTerms {
  std::vector<double> y, a, b;
  std::vector<int64_t> n;
  void resize(std::size_t size) {
    y.assign(size, 0.0);
    a.assign(size, 0.0);
    b.assign(size, 0.0);
    n.assign(size, 0);
  }
};

// Any conv kind (spec::Conv's 2-D kinds are the 3-D formulas with d = t = 1). x is
// (N, C, D, H, W); w is (K, C/g, T, R, S), or (C, K/g, T, R, S) when transposed; bias K
// floats or null. Returns (N, K, O, P, Q). Each output adds bias, then its taps in (t, r, s, c)
// order: for conv2d that is cpu_reference.cpp's order, so the two agree bit for bit.
[[nodiscard]] std::vector<double> conv_any(const spec::Conv& cv, const float* x, const float* w,
                                           const float* bias_or_null, MainTerms* terms = nullptr);

// linear (x (M, K), W (N, K)) or matmul (A (batch, M, K) or (batch, K, M) with trans_a;
// B (batch, K, N) or (batch, N, K) with trans_b); bias N floats or null. Returns
// (batch, M, N) row-major.
[[nodiscard]] std::vector<double> gemm_any(const spec::Gemm& g, bool linear, const float* a, const float* b,
                                           const float* bias_or_null, MainTerms* terms = nullptr);

// The main operator's terms of a draw (no bias): conv_any or gemm_any with `terms`, on the CPU.
[[nodiscard]] MainTerms main_terms(const spec::Problem& p, const ModelData& d);

}  // namespace fusetune::reference::detail
