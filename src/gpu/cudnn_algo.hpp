#pragma once
// What a cuDNN forward-algorithm search yields, and the rules that make it honest for a math
// mode. GPU-free: the pure parts of CudnnConv live here so they can be tested without a GPU.
#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/math_mode.hpp"

namespace fusetune::gpu {

// The math mode is fusetune's own type (common/math_mode.hpp); cuDNN code names it here too.
using fusetune::MathMode;
using fusetune::math_mode_name;
using fusetune::parse_math_mode;

// One (algorithm, math type) result of cudnnFindConvolutionForwardAlgorithmEx.
struct ConvAlgoChoice {
  int algo = 0;            // cudnnConvolutionFwdAlgo_t
  float time_ms = 0.0f;    // cuDNN's own measurement during the search
  size_t workspace = 0;    // bytes this algorithm needs
  int math_type = 0;       // cudnnMathType_t it was measured with
  std::string algo_name;   // "IMPLICIT_PRECOMP_GEMM"
  int status = 0;          // cudnnStatus_t; only CUDNN_STATUS_SUCCESS results are usable
};

// "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING", "WINOGRAD",
// "WINOGRAD_NONFUSED"; "ALGO_<n>" for values this build does not know.
[[nodiscard]] std::string fwd_algo_name(int algo);
// "default", "tensor_op", "tensor_op_allow_conversion", "fma"; "math_<n>" otherwise.
[[nodiscard]] std::string math_type_name(int math_type);

// The math type set on the descriptor while searching: tf32 -> CUDNN_TENSOR_OP_MATH (cuDNN 9
// permits TF32 for float data with it), fp32 -> CUDNN_FMA_MATH (no tensor cores at all).
[[nodiscard]] cudnnMathType_t search_math_type(MathMode mode);
// Whether a result measured with `math_type` may stand for `mode`. fp32 admits only
// DEFAULT and FMA results: a TENSOR_OP result would be a TF32 kernel.
[[nodiscard]] bool math_type_allowed(MathMode mode, int math_type);
// The math type to run an allowed result with. For fp32 this is always CUDNN_FMA_MATH, because
// CUDNN_DEFAULT_MATH permits TF32 for float data on sm_80 and newer.
[[nodiscard]] cudnnMathType_t run_math_type(MathMode mode, int math_type);

// The usable results for `mode`: status success and an allowed math type, fastest first
// (stable, so cuDNN's order breaks ties).
[[nodiscard]] std::vector<ConvAlgoChoice> rank_algos(const std::vector<ConvAlgoChoice>& all, MathMode mode);

// "IMPLICIT_PRECOMP_GEMM (tf32)"
[[nodiscard]] std::string choice_label(const ConvAlgoChoice& choice, MathMode mode);

}  // namespace fusetune::gpu
