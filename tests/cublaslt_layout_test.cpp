// The GPU-free half of the cuBLASLt GEMM runner (gpu/cublaslt*.hpp): the row-major ->
// column-major mapping, checked by executing it -- a column-major GEMM written from cuBLASLt's
// documented semantics, fed only LtGemmLayout's numbers, must equal reference::detail::gemm_any
// for every flag combination --; the algorithm key's text form; the compute types; the status
// text and the library version, which need no GPU.
#include <gtest/gtest.h>

#include <cublasLt.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cublaslt_algo_key.hpp"
#include "gpu/cublaslt_check.hpp"
#include "gpu/cublaslt_descs.hpp"
#include "gpu/cublaslt_layout.hpp"
#include "reference/model_main.hpp"
#include "random_floats.hpp"

namespace fusetune::gpu {
namespace {

using testing::random_floats;

// Element (i, j) of op(X) for a column-major LtMatrix X of batch entry `bt`.
double op_at(const LtMatrix& x, const float* base, int64_t bt, int64_t i, int64_t j) {
  const int64_t row = x.transposed ? j : i, col = x.transposed ? i : j;
  return double(base[bt * x.batch_stride + col * x.ld + row]);
}

// What cublasLtMatmul computes (alpha 1, beta 0, EPILOGUE_BIAS: bias[i] added to row i of D),
// from the layout's numbers alone. A is `first` (our B), B the other.
std::vector<double> column_major_gemm(const LtGemmLayout& lt, const float* lt_a_ptr, const float* lt_b_ptr,
                                      const float* bias, size_t out_elems) {
  std::vector<double> d(out_elems, std::nan(""));
  for (int64_t bt = 0; bt < lt.batch; ++bt)
    for (int64_t i = 0; i < lt.m; ++i)
      for (int64_t j = 0; j < lt.n; ++j) {
        double acc = bias != nullptr ? double(bias[i]) : 0.0;
        for (int64_t p = 0; p < lt.k; ++p) acc += op_at(lt.lt_a, lt_a_ptr, bt, i, p) * op_at(lt.lt_b, lt_b_ptr, bt, p, j);
        d[size_t(bt * lt.d.batch_stride + j * lt.d.ld + i)] = acc;
      }
  return d;
}

struct Flags {
  bool linear, trans_a, trans_b, bias;
  int64_t batch;
};

class CublasLtLayout : public ::testing::TestWithParam<Flags> {};

TEST_P(CublasLtLayout, ColumnMajorGemmOfTheMappingEqualsTheRowMajorReference) {
  const Flags f = GetParam();
  spec::Gemm g;
  g.batch = f.batch;
  g.m = 37;
  g.k = 53;
  g.n = 29;
  g.bias = f.bias;
  g.trans_a = f.trans_a;
  g.trans_b = f.trans_b;
  const auto a = random_floats(size_t(gemm_a_elems(g)), 1);
  const auto b = random_floats(size_t(gemm_b_elems(g)), 2);
  const auto bias = random_floats(size_t(g.n), 3);
  const LtGemmLayout lt = lt_gemm_layout(g, f.linear);
  ASSERT_EQ(lt.first, GemmOperand::b);
  EXPECT_EQ(lt.bias_len, g.n);
  // D's rows are where EPILOGUE_BIAS's vector runs: they must be our N (the features).
  EXPECT_EQ(lt.d.rows, g.n);
  EXPECT_EQ(lt.m, lt.d.rows);
  EXPECT_EQ(lt.n, lt.d.cols);
  // Shapes agree as cuBLASLt checks them: op(A) m x k, op(B) k x n.
  EXPECT_EQ(lt.lt_a.transposed ? lt.lt_a.cols : lt.lt_a.rows, lt.m);
  EXPECT_EQ(lt.lt_a.transposed ? lt.lt_a.rows : lt.lt_a.cols, lt.k);
  EXPECT_EQ(lt.lt_b.transposed ? lt.lt_b.cols : lt.lt_b.rows, lt.k);
  EXPECT_EQ(lt.lt_b.transposed ? lt.lt_b.rows : lt.lt_b.cols, lt.n);
  for (const LtMatrix* x : {&lt.lt_a, &lt.lt_b, &lt.d}) EXPECT_GE(x->ld, x->rows);  // cuBLASLt's ld >= rows

  const float* bias_ptr = f.bias ? bias.data() : nullptr;
  const std::vector<double> want = reference::detail::gemm_any(g, f.linear, a.data(), b.data(), bias_ptr);
  const std::vector<double> got = column_major_gemm(lt, b.data(), a.data(), bias_ptr, want.size());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    // The same products in the same order: equal to the last bit.
    ASSERT_EQ(got[i], want[i]) << "element " << i;
  }
}

std::string flags_text(const Flags& f) {
  return std::string(f.linear ? "linear" : "matmul") + (f.trans_a ? "_ta" : "") + (f.trans_b ? "_tb" : "") +
         (f.bias ? "_bias" : "") + "_batch" + std::to_string(f.batch);
}
std::string flags_name(const ::testing::TestParamInfo<Flags>& param) { return flags_text(param.param); }
// gtest prints a parameter into the test's listing: the name, not the struct's bytes.
void PrintTo(const Flags& f, std::ostream* os) { *os << flags_text(f); }

INSTANTIATE_TEST_SUITE_P(
    AllFlags, CublasLtLayout,
    ::testing::Values(Flags{true, false, false, false, 1}, Flags{true, false, false, true, 1},
                      // linear ignores the trans flags (its W is always (N, K)), as gemm_any does
                      Flags{true, true, false, true, 1}, Flags{false, false, false, false, 1},
                      Flags{false, true, false, false, 1}, Flags{false, false, true, false, 1},
                      Flags{false, true, true, false, 1}, Flags{false, false, false, false, 3},
                      Flags{false, true, false, false, 3}, Flags{false, false, true, false, 3},
                      Flags{false, true, true, false, 3}, Flags{false, true, true, true, 2}),
    flags_name);

TEST(CublasLtLayoutFacts, LinearIsWTransposedAgainstX) {
  spec::Gemm g;
  g.m = 4;
  g.k = 6;
  g.n = 5;
  const LtGemmLayout lt = lt_gemm_layout(g, true);
  EXPECT_EQ(lt.m, 5);
  EXPECT_EQ(lt.n, 4);
  EXPECT_EQ(lt.k, 6);
  EXPECT_EQ(lt.lt_a, (LtMatrix{6, 5, 6, 30, true}));   // W (N, K) row-major = K x N column-major, op T
  EXPECT_EQ(lt.lt_b, (LtMatrix{6, 4, 6, 24, false}));  // x (M, K) row-major = K x M column-major, op N
  EXPECT_EQ(lt.d, (LtMatrix{5, 4, 5, 20, false}));     // y (M, N) row-major = N x M column-major
  EXPECT_TRUE(gemm_b_transposed(g, true));
  EXPECT_FALSE(gemm_a_transposed(g, true));
  g.k = 0;
  EXPECT_THROW((void)lt_gemm_layout(g, true), InputError);
}

TEST(CublasLtAlgoKeyText, RoundTripsAndRefusesAnythingElse) {
  CublasLtAlgoKey key{66, 20, 12, 4, 2, 1, 3, 7, 2};
  const std::string text = key.text();
  EXPECT_EQ(text, "id=66,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2");
  EXPECT_EQ(parse_cublaslt_algo_key(text), key);
  EXPECT_EQ(parse_cublaslt_algo_key(CublasLtAlgoKey{}.text()), CublasLtAlgoKey{});
  key.id = -1;
  key.splitk = 2147483647;
  key.tile = 4294967295u;
  key.cluster = 65535;
  EXPECT_EQ(parse_cublaslt_algo_key(key.text()), key);

  for (const char* bad : {"", "id=1", "id=66,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7",
                          "id=66,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2,x=1",
                          "tile=20,id=66,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2",
                          "id=66,tile=-1,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2",
                          "id=66,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=65536,cluster=2",
                          "id=6x,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2",
                          "id=,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2",
                          "id=66,tile=20,stages=12,splitk=4,reduction=2,swizzle=1,custom=3,inner=7,cluster=2,"}) {
    std::string why;
    EXPECT_FALSE(parse_cublaslt_algo_key(bad, &why).has_value()) << bad;
    EXPECT_NE(why.find("not a cuBLASLt algorithm key"), std::string::npos) << bad << ": " << why;
  }
}

TEST(CublasLtFacts, ComputeTypePerMathMode) {
  EXPECT_EQ(cublas_compute_type(MathMode::tf32), CUBLAS_COMPUTE_32F_FAST_TF32);
  EXPECT_EQ(cublas_compute_type(MathMode::fp32), CUBLAS_COMPUTE_32F);
}

TEST(CublasLtFacts, StatusTextAndVersionNeedNoGpu) {
  const std::string text = cublas_status_text(CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(text.find("CUBLAS_STATUS_NOT_SUPPORTED (15)"), std::string::npos) << text;
  // The library the binary loaded is the one whose header it was built against (same major).
  EXPECT_EQ(cublaslt_version() / 10000, size_t(CUBLAS_VER_MAJOR)) << cublaslt_version();
}

// Descriptors are host objects: they are created, set and destroyed without a GPU, and a bad
// attribute's error names it.
TEST(CublasLtFacts, DescriptorsNeedNoGpuAndABadAttributeIsNamed) {
  CublasLtMatmulDesc desc(CUBLAS_COMPUTE_32F, CUDA_R_32F);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(CUBLAS_OP_T));
  CublasLtMatrixLayout layout(CUDA_R_32F, 29, 53, 29);
  layout.set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(3));
  CublasLtPreference pref;
  pref.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(1) << 20);
  try {
    desc.set(CUBLASLT_MATMUL_DESC_TRANSA, int64_t(0));  // the attribute is int32_t
    FAIL() << "a wrong-size attribute was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul descriptor attribute 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << e.what();
  }
  CublasLtMatmulDesc moved = std::move(desc);
  EXPECT_NE(moved.get(), nullptr);
}

}  // namespace
}  // namespace fusetune::gpu
