#pragma once
// The activation cuBLASLt applies in its epilogue, after the sum and the bias, before the store
// (CUBLASLT_EPILOGUE_RELU[_BIAS], CUBLASLT_EPILOGUE_GELU[_BIAS]): the `cublaslt-fused`
// candidate's way to take a GEMM problem's first epilogue op into the vendor's kernel. Its own
// header because the plan (codegen) names it and the worker's cuBLASLt plan (gpu) applies it,
// and codegen does not include cuBLASLt's headers.
//   relu       max(x, 0), exact
//   gelu_tanh  cuBLASLt's GELU, which is the tanh approximation (PyTorch's gelu(approximate='tanh'));
//              never PyTorch's default erf GELU
#include <optional>
#include <string_view>

namespace fusetune {

enum class GemmActivation { none, relu, gelu_tanh };

[[nodiscard]] constexpr std::string_view gemm_activation_name(GemmActivation a) {
  switch (a) {
    case GemmActivation::none: return "none";
    case GemmActivation::relu: return "relu";
    case GemmActivation::gelu_tanh: return "gelu_tanh";
  }
  return "none";  // unreachable: the switch names every value
}

[[nodiscard]] constexpr std::optional<GemmActivation> parse_gemm_activation(std::string_view text) {
  for (GemmActivation a : {GemmActivation::none, GemmActivation::relu, GemmActivation::gelu_tanh})
    if (gemm_activation_name(a) == text) return a;
  return std::nullopt;
}

}  // namespace fusetune
