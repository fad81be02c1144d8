#pragma once
// How a fusetune GEMM (row-major, spec::Gemm) is described to cuBLASLt (column-major), as plain
// data: no cuBLAS types, so the mapping is tested without a GPU (cublaslt_layout_test.cpp).
//
// The mapping is the transpose trick, not CUBLASLT_ORDER_ROW layouts: a row-major R x C matrix
// is, byte for byte, a column-major C x R matrix, so the row-major C = op(A) op(B) is computed
// as the column-major C^T = op(B)^T op(A)^T: cuBLASLt's A is our B, its B is our A, its m is
// our N and its n our M. Why not ORDER_ROW: CUBLASLT_EPILOGUE_BIAS adds a vector along the rows
// of D, which after the swap are our N features (nn.Linear's bias), where an ORDER_ROW D (M x N)
// would broadcast it along M; and cuBLASLt's fp32/TF32 kernels are written for ORDER_COL,
// so ORDER_ROW narrows (or empties) the heuristic's list.
#include <cstdint>

#include "spec/problem.hpp"

namespace fusetune::gpu {

// One matrix as cuBLASLt sees it: `batch` column-major rows x cols matrices, `ld` elements
// between columns and `batch_stride` elements between matrices; `transposed`: used as op = T.
struct LtMatrix {
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
  bool transposed = false;
  bool operator==(const LtMatrix&) const = default;
};

enum class GemmOperand { a, b };

struct LtGemmLayout {
  int64_t m = 0, n = 0, k = 0, batch = 1;  // cuBLASLt's: m = our N, n = our M
  GemmOperand first = GemmOperand::b;      // which of our operands is cuBLASLt's A
  LtMatrix lt_a, lt_b, d;                  // D is also C (beta = 0)
  int64_t bias_len = 0;                    // along D's rows: our N
  bool operator==(const LtGemmLayout&) const = default;
};

// Whether our A / B are stored transposed, as reference::detail::gemm_any reads them: linear's
// x is (M, K) and never transposed; its W is (N, K), i.e. a matmul B with trans_b.
[[nodiscard]] bool gemm_a_transposed(const spec::Gemm& g, bool linear);
[[nodiscard]] bool gemm_b_transposed(const spec::Gemm& g, bool linear);

// Element counts of the buffers: A batch*M*K, B batch*K*N (gemm_any steps B per batch for
// linear too), output batch*M*N, bias N.
[[nodiscard]] int64_t gemm_a_elems(const spec::Gemm& g);
[[nodiscard]] int64_t gemm_b_elems(const spec::Gemm& g);
[[nodiscard]] int64_t gemm_out_elems(const spec::Gemm& g);

// Throws fusetune::InputError for a non-positive extent.
[[nodiscard]] LtGemmLayout lt_gemm_layout(const spec::Gemm& g, bool linear);

}  // namespace fusetune::gpu
