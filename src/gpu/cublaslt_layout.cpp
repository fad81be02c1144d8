#include "gpu/cublaslt_layout.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::gpu {

bool gemm_a_transposed(const spec::Gemm& g, bool linear) { return !linear && g.trans_a; }
bool gemm_b_transposed(const spec::Gemm& g, bool linear) { return linear || g.trans_b; }

int64_t gemm_a_elems(const spec::Gemm& g) { return g.batch * g.m * g.k; }
int64_t gemm_b_elems(const spec::Gemm& g) { return g.batch * g.k * g.n; }
int64_t gemm_out_elems(const spec::Gemm& g) { return g.batch * g.m * g.n; }

LtGemmLayout lt_gemm_layout(const spec::Gemm& g, bool linear) {
  if (g.batch < 1 || g.m < 1 || g.k < 1 || g.n < 1) {
    throw InputError(fmt::format("GEMM extents must be positive: batch={} m={} k={} n={}", g.batch, g.m, g.k, g.n));
  }
  const int64_t M = g.m, N = g.n, K = g.k;
  LtGemmLayout lt;
  lt.m = N;
  lt.n = M;
  lt.k = K;
  lt.batch = g.batch;
  lt.first = GemmOperand::b;
  // cuBLASLt's A must be op(B)^T, N x K. B stored (K, N) row-major is column-major N x K with
  // ld N: that already is op(B)^T, op = N. B stored (N, K) (trans_b, linear's W) is
  // column-major K x N with ld K, which is op(B) itself: op = T.
  lt.lt_a = gemm_b_transposed(g, linear) ? LtMatrix{K, N, K, K * N, true} : LtMatrix{N, K, N, K * N, false};
  // cuBLASLt's B must be op(A)^T, K x M. A stored (M, K) row-major is column-major K x M with
  // ld K: op = N. A stored (K, M) (trans_a) is column-major M x K with ld M: op = T.
  lt.lt_b = gemm_a_transposed(g, linear) ? LtMatrix{M, K, M, M * K, true} : LtMatrix{K, M, K, M * K, false};
  // D = C^T, N x M column-major with ld N: row-major (M, N), the output as fusetune stores it.
  lt.d = LtMatrix{N, M, N, M * N, false};
  lt.bias_len = N;
  return lt;
}

}  // namespace fusetune::gpu
