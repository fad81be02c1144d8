// GPU-free tests of the cuDNN wrappers: versions, algorithm tables, math-mode rules, the
// checking macros and every descriptor (cuDNN creates descriptors without a GPU; only the
// handle, and so searching and running, needs one: see gpu_cudnn_test.cpp).
#include <cudnn.h>
#include <gtest/gtest.h>

#include <climits>
#include <limits>
#include <regex>
#include <string>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "gpu/cudnn_algo.hpp"
#include "gpu/cudnn_check.hpp"
#include "gpu/cudnn_conv.hpp"
#include "gpu/cudnn_conv_desc.hpp"
#include "gpu/cudnn_conv_descs.hpp"
#include "gpu/cudnn_filter_desc.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/cudnn_tensor_desc.hpp"
#include "gpu/cudnn_version.hpp"
#include "spec_builders.hpp"

namespace fusetune::gpu {
namespace {

using spec::Layout;

// Every owner of a cuDNN object is move-only, and moving never throws.
template <typename T>
constexpr bool move_only_v = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                             std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(move_only_v<CudnnHandle>);
static_assert(move_only_v<TensorDesc>);
static_assert(move_only_v<FilterDesc>);
static_assert(move_only_v<ConvDesc>);
static_assert(move_only_v<CudnnConv>);

spec::Conv make_conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s, int64_t stride,
                     int64_t pad, int64_t dil) {
  return spec_builders::with_window(spec_builders::conv(n, c, h, w, k, r, s), stride, pad, dil);
}

// ---- versions ---------------------------------------------------------------------------

TEST(CudnnVersion, RuntimeLibraryMatchesHeadersMajor) {
  const int runtime = cudnn_version();
  EXPECT_GE(runtime, 90000);
  EXPECT_EQ(runtime / 10000, CUDNN_MAJOR) << "loaded libcudnn " << runtime << ", headers " << CUDNN_VERSION;
  EXPECT_EQ(cudnn_header_version(), CUDNN_VERSION);
}

TEST(CudnnVersion, StringIsMajorMinorPatch) {
  const std::string text = cudnn_version_string();
  EXPECT_TRUE(std::regex_match(text, std::regex(R"(\d+\.\d+\.\d+)"))) << text;
  EXPECT_EQ(text.substr(0, text.find('.')), std::to_string(CUDNN_MAJOR));
}

TEST(CudnnVersion, DecodesBothEncodings) {
  EXPECT_EQ(cudnn_version_string(91900), "9.19.0");
  EXPECT_EQ(cudnn_version_string(90100), "9.1.0");
  EXPECT_EQ(cudnn_version_string(100203), "10.2.3");
  EXPECT_EQ(cudnn_version_string(8907), "8.9.7");  // cuDNN 8: major*1000 + minor*100 + patch
}

// ---- algorithm and math tables -----------------------------------------------------------

TEST(CudnnAlgo, ForwardAlgorithmNames) {
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM), "IMPLICIT_GEMM");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM), "IMPLICIT_PRECOMP_GEMM");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_GEMM), "GEMM");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT), "DIRECT");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_FFT), "FFT");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING), "FFT_TILING");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD), "WINOGRAD");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED), "WINOGRAD_NONFUSED");
  EXPECT_EQ(fwd_algo_name(CUDNN_CONVOLUTION_FWD_ALGO_COUNT), "ALGO_8");
  EXPECT_EQ(fwd_algo_name(-1), "ALGO_-1");
}

TEST(CudnnAlgo, MathTypeNames) {
  EXPECT_EQ(math_type_name(CUDNN_DEFAULT_MATH), "default");
  EXPECT_EQ(math_type_name(CUDNN_TENSOR_OP_MATH), "tensor_op");
  EXPECT_EQ(math_type_name(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION), "tensor_op_allow_conversion");
  EXPECT_EQ(math_type_name(CUDNN_FMA_MATH), "fma");
  EXPECT_EQ(math_type_name(17), "math_17");
}

TEST(CudnnAlgo, MathModeNamesRoundTrip) {
  for (const MathMode mode : {MathMode::tf32, MathMode::fp32}) {
    EXPECT_EQ(parse_math_mode(math_mode_name(mode)), mode);
  }
  EXPECT_EQ(math_mode_name(MathMode::tf32), "tf32");
  EXPECT_EQ(math_mode_name(MathMode::fp32), "fp32");
  EXPECT_FALSE(parse_math_mode("TF32").has_value());
  EXPECT_FALSE(parse_math_mode("fp16").has_value());
}

TEST(CudnnAlgo, Fp32NeverAdmitsTensorOps) {
  EXPECT_EQ(search_math_type(MathMode::fp32), CUDNN_FMA_MATH);
  EXPECT_TRUE(math_type_allowed(MathMode::fp32, CUDNN_FMA_MATH));
  EXPECT_TRUE(math_type_allowed(MathMode::fp32, CUDNN_DEFAULT_MATH));
  EXPECT_FALSE(math_type_allowed(MathMode::fp32, CUDNN_TENSOR_OP_MATH));
  EXPECT_FALSE(math_type_allowed(MathMode::fp32, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
  // DEFAULT_MATH permits TF32 for float on sm_80+: an fp32 run always uses FMA_MATH.
  EXPECT_EQ(run_math_type(MathMode::fp32, CUDNN_DEFAULT_MATH), CUDNN_FMA_MATH);
  EXPECT_EQ(run_math_type(MathMode::fp32, CUDNN_FMA_MATH), CUDNN_FMA_MATH);
}

TEST(CudnnAlgo, Tf32AdmitsAnyMathTypeAndRunsItAsMeasured) {
  EXPECT_EQ(search_math_type(MathMode::tf32), CUDNN_TENSOR_OP_MATH);
  for (const int m : {CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
                      CUDNN_FMA_MATH}) {
    EXPECT_TRUE(math_type_allowed(MathMode::tf32, m));
    EXPECT_EQ(run_math_type(MathMode::tf32, m), m);
  }
}

ConvAlgoChoice result(int algo, float ms, int math_type, int status = CUDNN_STATUS_SUCCESS) {
  return ConvAlgoChoice{algo, ms, 0, math_type, fwd_algo_name(algo), status};
}

TEST(CudnnAlgo, RankKeepsUsableResultsFastestFirst) {
  const std::vector<ConvAlgoChoice> all = {
      result(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1.0f, CUDNN_TENSOR_OP_MATH),
      result(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, 2.0f, CUDNN_FMA_MATH),
      result(CUDNN_CONVOLUTION_FWD_ALGO_FFT, -1.0f, CUDNN_FMA_MATH, CUDNN_STATUS_NOT_SUPPORTED),
      result(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1.5f, CUDNN_DEFAULT_MATH),
      result(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, 0.5f, CUDNN_FMA_MATH, CUDNN_STATUS_ALLOC_FAILED),
      result(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 2.0f, CUDNN_FMA_MATH),
  };
  const std::vector<ConvAlgoChoice> fp32 = rank_algos(all, MathMode::fp32);
  ASSERT_EQ(fp32.size(), 3u);
  EXPECT_EQ(fp32[0].algo, CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
  EXPECT_EQ(fp32[1].algo, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);  // tie: cuDNN's order kept
  EXPECT_EQ(fp32[2].algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);

  const std::vector<ConvAlgoChoice> tf32 = rank_algos(all, MathMode::tf32);
  ASSERT_EQ(tf32.size(), 4u);
  EXPECT_EQ(tf32[0].algo, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM);
  EXPECT_EQ(tf32[1].algo, CUDNN_CONVOLUTION_FWD_ALGO_GEMM);
}

TEST(CudnnAlgo, RankDropsResultsWithoutAValidTime) {
  const std::vector<ConvAlgoChoice> all = {result(0, -1.0f, CUDNN_FMA_MATH), result(1, std::numeric_limits<float>::quiet_NaN(), CUDNN_FMA_MATH)};
  EXPECT_TRUE(rank_algos(all, MathMode::fp32).empty());
  EXPECT_TRUE(rank_algos({}, MathMode::tf32).empty());
}

TEST(CudnnAlgo, ChoiceLabelNamesAlgorithmAndMode) {
  EXPECT_EQ(choice_label(result(1, 1.0f, CUDNN_TENSOR_OP_MATH), MathMode::tf32), "IMPLICIT_PRECOMP_GEMM (tf32)");
  EXPECT_EQ(choice_label(result(7, 1.0f, CUDNN_FMA_MATH), MathMode::fp32), "WINOGRAD_NONFUSED (fp32)");
}

// ---- checking macros -----------------------------------------------------------------------

// A call that fails without a GPU: a tensor with a zero extent.
cudnnStatus_t bad_set(cudnnTensorDescriptor_t desc) {
  return cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 0, 1, 1);
}

TEST(CudnnCheck, SuccessPassesThrough) {
  cudnnTensorDescriptor_t desc = nullptr;
  EXPECT_NO_THROW(FT_CUDNN_CALL(cudnnCreateTensorDescriptor(&desc)));
  EXPECT_NO_THROW(FT_CUDNN_CALL(cudnnDestroyTensorDescriptor(desc)));
}

TEST(CudnnCheck, FailureThrowsWithLocationStatusCallAndCudnnsReason) {
  TensorDesc owner(Layout::nchw, 1, 1, 1, 1);
  cudnnTensorDescriptor_t desc = owner.get();
  try {
    FT_CUDNN_CALL(bad_set(desc));
    FAIL() << "no throw";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_NE(what.find("cudnn_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("bad_set(desc) failed"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDNN_STATUS_BAD_PARAM (2000)"), std::string::npos) << what;
#if CUDNN_MAJOR >= 9
    // cudnnGetLastErrorString's explanation follows the status.
    const size_t after = what.find("(2000): ");
    ASSERT_NE(after, std::string::npos) << what;
    EXPECT_GT(what.size(), after + 8) << what;
#endif
  }
}

TEST(CudnnCheck, ReasonIsReportedOnceNotCarriedToTheNextError) {
  TensorDesc owner(Layout::nchw, 1, 1, 1, 1);
  ASSERT_NE(bad_set(owner.get()), CUDNN_STATUS_SUCCESS);
  detail::discard_cudnn_last_error();
  const std::string msg = detail::cudnn_error_message(CUDNN_STATUS_NOT_SUPPORTED, "call()", "f.cpp", 7);
  EXPECT_EQ(msg, "f.cpp:7: call() failed: CUDNN_STATUS_NOT_SUPPORTED (3000)");
}

TEST(CudnnCheck, NoexceptTwinReportsOnStderrAndNeverThrows) {
  TensorDesc owner(Layout::nchw, 1, 1, 1, 1);
  cudnnTensorDescriptor_t desc = owner.get();
  const auto in_destructor = [desc]() noexcept { FT_CUDNN_CALL_NOEXCEPT(bad_set(desc)); };
  static_assert(noexcept(in_destructor()));
  testing::internal::CaptureStderr();
  in_destructor();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  EXPECT_NE(err.find("CUDNN_STATUS_BAD_PARAM"), std::string::npos) << err;
  EXPECT_NE(err.find("bad_set(desc)"), std::string::npos) << err;
}

// ---- descriptors ---------------------------------------------------------------------------

struct Strides {
  int n, c, h, w;
};

Strides tensor_strides(const TensorDesc& desc, int dims[4]) {
  cudnnDataType_t type{};
  Strides s{};
  FT_CUDNN_CALL(cudnnGetTensor4dDescriptor(desc.get(), &type, &dims[0], &dims[1], &dims[2], &dims[3], &s.n, &s.c,
                                           &s.h, &s.w));
  EXPECT_EQ(type, CUDNN_DATA_FLOAT);
  return s;
}

TEST(CudnnTensorDesc, NchwIsDenseRowMajor) {
  const TensorDesc desc(Layout::nchw, 2, 3, 9, 7);
  int dims[4];
  const Strides s = tensor_strides(desc, dims);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], 3);
  EXPECT_EQ(dims[2], 9);
  EXPECT_EQ(dims[3], 7);
  EXPECT_EQ(s.w, 1);
  EXPECT_EQ(s.h, 7);
  EXPECT_EQ(s.c, 63);
  EXPECT_EQ(s.n, 189);
  EXPECT_EQ(desc.layout(), Layout::nchw);
}

TEST(CudnnTensorDesc, NhwcKeepsLogicalDimsWithChannelsContiguous) {
  const TensorDesc desc(Layout::nhwc, 2, 3, 9, 7);
  int dims[4];
  const Strides s = tensor_strides(desc, dims);
  EXPECT_EQ(dims[1], 3);  // still (N, C, H, W) logically
  EXPECT_EQ(s.c, 1);
  EXPECT_EQ(s.w, 3);
  EXPECT_EQ(s.h, 21);
  EXPECT_EQ(s.n, 189);
}

TEST(CudnnTensorDesc, RejectsUndecidedLayoutAndOversizedExtents) {
  EXPECT_THROW(TensorDesc(Layout::any, 1, 1, 1, 1), Error);
  EXPECT_THROW(TensorDesc(Layout::nchw, int64_t{INT_MAX} + 1, 1, 1, 1), InputError);
  EXPECT_THROW(TensorDesc(Layout::nchw, 1, 0, 1, 1), Error);  // cuDNN's own BAD_PARAM
}

// Past 2^31 - 1 elements the legacy API answers NOT_SUPPORTED (H100, cuDNN 9.19): a variant on
// such a tensor is recorded not_supported, so the refusal must be the type the worker catches.
TEST(CudnnTensorDesc, PastTwoToTheThirtyOneElementsIsNotSupportedNotAFault) {
  EXPECT_NO_THROW(TensorDesc(Layout::nchw, 1, 1, 1, int64_t{INT32_MAX}));
  try {
    TensorDesc(Layout::nhwc, 520, 64, 256, 256);
    FAIL() << "no refusal";
  } catch (const CudnnNotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("(520, 64, 256, 256)"), std::string::npos) << e.what();
  }
  // cuDNN's own NOT_SUPPORTED family (3000 and its sub-codes) is the same refusal.
  EXPECT_THROW(detail::throw_cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, "call()", "f.cpp", 1), CudnnNotSupported);
  EXPECT_THROW(detail::throw_cudnn_error(CUDNN_STATUS_BAD_PARAM, "call()", "f.cpp", 1), Error);
  try {
    detail::throw_cudnn_error(CUDNN_STATUS_BAD_PARAM, "call()", "f.cpp", 1);
  } catch (const CudnnNotSupported&) {
    FAIL() << "BAD_PARAM is not a refusal";
  } catch (const Error&) {
  }
}

TEST(CudnnTensorDesc, MoveTransfersOwnership) {
  TensorDesc a(Layout::nchw, 1, 2, 3, 4);
  const cudnnTensorDescriptor_t raw = a.get();
  TensorDesc b(std::move(a));
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  TensorDesc c(Layout::nhwc, 1, 1, 1, 1);
  c = std::move(b);  // c's old descriptor is destroyed here, exactly once
  EXPECT_EQ(c.get(), raw);
}

TEST(CudnnFilterDesc, FormatFollowsLayout) {
  for (const auto& [layout, format] : {std::pair{Layout::nchw, CUDNN_TENSOR_NCHW},
                                       std::pair{Layout::nhwc, CUDNN_TENSOR_NHWC}}) {
    const FilterDesc desc(layout, 4, 3, 3, 2);
    cudnnDataType_t type{};
    cudnnTensorFormat_t got{};
    int k = 0, c = 0, r = 0, s = 0;
    FT_CUDNN_CALL(cudnnGetFilter4dDescriptor(desc.get(), &type, &got, &k, &c, &r, &s));
    EXPECT_EQ(type, CUDNN_DATA_FLOAT);
    EXPECT_EQ(got, format);
    EXPECT_EQ(k, 4);
    EXPECT_EQ(c, 3);
    EXPECT_EQ(r, 3);
    EXPECT_EQ(s, 2);
    EXPECT_EQ(desc.layout(), layout);
  }
  EXPECT_THROW(FilterDesc(Layout::any, 1, 1, 1, 1), Error);
}

TEST(CudnnConvDesc, CarriesGeometryModeAndComputeType) {
  spec::Conv conv = make_conv(2, 3, 9, 9, 4, 3, 3, 2, 1, 2);
  conv.stride_w = 3;
  conv.pad_w = 0;
  conv.dil_w = 1;
  const ConvDesc desc(conv);
  int pad_h = 0, pad_w = 0, u = 0, v = 0, dil_h = 0, dil_w = 0;
  cudnnConvolutionMode_t mode{};
  cudnnDataType_t compute{};
  FT_CUDNN_CALL(cudnnGetConvolution2dDescriptor(desc.get(), &pad_h, &pad_w, &u, &v, &dil_h, &dil_w, &mode, &compute));
  EXPECT_EQ(pad_h, 1);
  EXPECT_EQ(pad_w, 0);
  EXPECT_EQ(u, 2);
  EXPECT_EQ(v, 3);
  EXPECT_EQ(dil_h, 2);
  EXPECT_EQ(dil_w, 1);
  EXPECT_EQ(mode, CUDNN_CROSS_CORRELATION);
  EXPECT_EQ(compute, CUDNN_DATA_FLOAT);
}

TEST(CudnnConvDesc, MathTypeRoundTrips) {
  ConvDesc desc(make_conv(1, 1, 3, 3, 1, 1, 1, 1, 0, 1));
  for (const cudnnMathType_t m : {CUDNN_FMA_MATH, CUDNN_TENSOR_OP_MATH, CUDNN_DEFAULT_MATH}) {
    desc.set_math_type(m);
    EXPECT_EQ(desc.math_type(), m);
  }
}

// ---- the descriptor set, with cuDNN's output shape checked against the spec's -------------

struct ShapeCase {
  const char* name;
  spec::Conv conv;
};

// gtest prints a parameter into the test's listing: the name, not the struct's bytes.
void PrintTo(const ShapeCase& c, std::ostream* os) { *os << c.name; }

class CudnnConvDescsTest : public testing::TestWithParam<std::tuple<ShapeCase, Layout>> {};

TEST_P(CudnnConvDescsTest, OutputDimsAgreeWithSpec) {
  const auto& [shape, layout] = GetParam();
  const CudnnConvDescs descs(shape.conv, layout);
  const std::array<int, 4> nkpq = descs.conv.output_dims(descs.x, descs.w);
  EXPECT_EQ(nkpq[0], shape.conv.n);
  EXPECT_EQ(nkpq[1], shape.conv.k);
  EXPECT_EQ(nkpq[2], shape.conv.p());
  EXPECT_EQ(nkpq[3], shape.conv.q());
  EXPECT_EQ(descs.x.layout(), layout);
  EXPECT_EQ(descs.w.layout(), layout);
  EXPECT_EQ(descs.y.layout(), layout);
  EXPECT_EQ(descs.bias.layout(), layout);
}

spec::Conv asymmetric() {
  spec::Conv conv = make_conv(3, 5, 11, 7, 6, 3, 2, 1, 0, 1);
  conv.stride_h = 2;
  conv.pad_w = 2;
  conv.dil_h = 3;
  return conv;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudnnConvDescsTest,
    testing::Combine(testing::Values(ShapeCase{"plain", make_conv(2, 3, 9, 9, 4, 3, 3, 1, 0, 1)},
                                     ShapeCase{"strided_padded_dilated", make_conv(2, 3, 9, 9, 4, 3, 3, 2, 1, 2)},
                                     ShapeCase{"asymmetric", asymmetric()},
                                     ShapeCase{"pointwise", make_conv(1, 8, 5, 3, 16, 1, 1, 1, 0, 1)},
                                     ShapeCase{"kernelbench31", make_conv(128, 64, 128, 128, 128, 3, 3, 1, 0, 1)},
                                     ShapeCase{"kernelbench32", make_conv(64, 64, 256, 256, 128, 3, 3, 1, 0, 1)}),
                     testing::Values(Layout::nchw, Layout::nhwc)),
    [](const testing::TestParamInfo<CudnnConvDescsTest::ParamType>& param_info) {
      return std::string(std::get<0>(param_info.param).name) +
             (std::get<1>(param_info.param) == Layout::nchw ? "_nchw" : "_nhwc");
    });

TEST(CudnnConvDescs, ImpossibleShapesAreBadInput) {
  spec::Conv conv = make_conv(2, 3, 9, 9, 4, 3, 3, 1, 0, 1);
  conv.stride_h = 0;  // spec::Conv::p() would divide by zero
  EXPECT_THROW(CudnnConvDescs(conv, Layout::nchw), InputError);
  EXPECT_THROW(CudnnConvDescs(make_conv(2, 3, 9, 9, 4, 3, 3, 1, -1, 1), Layout::nchw), InputError);
  EXPECT_THROW(CudnnConvDescs(make_conv(2, 3, 9, 9, 4, 3, 3, 1, 0, 0), Layout::nchw), InputError);
  EXPECT_THROW(CudnnConvDescs(make_conv(0, 3, 9, 9, 4, 3, 3, 1, 0, 1), Layout::nchw), InputError);
  // Window 3 > input 2 with stride 2: p() truncates to 1, yet the output is empty.
  const spec::Conv empty = make_conv(1, 1, 2, 2, 1, 3, 3, 2, 0, 1);
  EXPECT_EQ(empty.p(), 1);
  EXPECT_THROW(CudnnConvDescs(empty, Layout::nchw), InputError);
  EXPECT_THROW(CudnnConvDescs(make_conv(1, 1, 5, 5, 1, 3, 3, 1, 0, 3), Layout::nhwc), InputError);
  EXPECT_THROW(CudnnConvDescs(make_conv(1, 1, 5, 5, 1, 3, 3, 1, 0, 1), Layout::any), Error);
}

TEST(CudnnConvDescs, SmallestValidWindowIsAccepted) {
  // Window exactly the padded input: one output pixel.
  const spec::Conv conv = make_conv(1, 1, 3, 3, 1, 5, 5, 1, 1, 1);
  ASSERT_EQ(conv.p(), 1);
  EXPECT_NO_THROW(CudnnConvDescs(conv, Layout::nchw));
}

TEST(CudnnConvDescs, OutputMismatchThrows) {
  const spec::Conv conv = make_conv(2, 3, 9, 9, 4, 3, 3, 1, 0, 1);
  EXPECT_NO_THROW(check_output_dims({2, 4, 7, 7}, conv));
  EXPECT_THROW(check_output_dims({2, 4, 7, 6}, conv), Error);
  EXPECT_THROW(check_output_dims({2, 4, 6, 7}, conv), Error);
  EXPECT_THROW(check_output_dims({2, 5, 7, 7}, conv), Error);
  EXPECT_THROW(check_output_dims({1, 4, 7, 7}, conv), Error);
}

}  // namespace
}  // namespace fusetune::gpu
