#include "gpu/cudnn_algo.hpp"

#include <algorithm>
#include <array>

namespace fusetune::gpu {

std::string fwd_algo_name(int algo) {
  // Indexed by cudnnConvolutionFwdAlgo_t; the static_assert keeps the table in step with cudnn.h.
  static constexpr std::array<const char*, 8> names = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM",     "DIRECT",
      "FFT",           "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED"};
  static_assert(names.size() == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  static_assert(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM == 1 &&
                CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7);
  if (algo >= 0 && algo < static_cast<int>(names.size())) return names[static_cast<size_t>(algo)];
  return "ALGO_" + std::to_string(algo);
}

std::string math_type_name(int math_type) {
  switch (math_type) {
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH: return "fma";
    default: return "math_" + std::to_string(math_type);
  }
}

cudnnMathType_t search_math_type(MathMode mode) {
  return mode == MathMode::tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

bool math_type_allowed(MathMode mode, int math_type) {
  if (mode == MathMode::tf32) return true;
  return math_type == CUDNN_DEFAULT_MATH || math_type == CUDNN_FMA_MATH;
}

cudnnMathType_t run_math_type(MathMode mode, int math_type) {
  if (mode == MathMode::fp32) return CUDNN_FMA_MATH;
  return static_cast<cudnnMathType_t>(math_type);
}

std::vector<ConvAlgoChoice> rank_algos(const std::vector<ConvAlgoChoice>& all, MathMode mode) {
  std::vector<ConvAlgoChoice> usable;
  for (const ConvAlgoChoice& c : all) {
    // A failed result carries a meaningless time (often -1): never rank it.
    if (c.status == CUDNN_STATUS_SUCCESS && math_type_allowed(mode, c.math_type) && c.time_ms >= 0.0f) {
      usable.push_back(c);
    }
  }
  std::stable_sort(usable.begin(), usable.end(),
                   [](const ConvAlgoChoice& a, const ConvAlgoChoice& b) { return a.time_ms < b.time_ms; });
  return usable;
}

std::string choice_label(const ConvAlgoChoice& choice, MathMode mode) {
  return choice.algo_name + " (" + std::string(math_mode_name(mode)) + ")";
}

}  // namespace fusetune::gpu
