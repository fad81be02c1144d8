#pragma once
// Host inputs of a problem of model v2 (any main operator, either epilogue form), in logical
// order, for the float64 model reference (model_reference.hpp) and tests.
#include <cstdint>
#include <vector>

#include "reference/problem_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// PyTorch's tensors, row-major:
//   input   conv (N, C, D, H, W) (D = 1 for the 2-D kinds); linear x (M, K); matmul A
//           (batch, M, K), or (batch, K, M) with trans_a
//   weight  conv (K, C/g, T, R, S), transposed conv (C, K/g, T, R, S) (T = 1 for the 2-D
//           kinds); linear W (N, K); matmul B (batch, K, N), or (batch, N, K) with trans_b
//   bias    K (conv) or N (linear) floats when the main operator has one, else empty
//   params  params[i]: parameter i, elems(problem.param_shapes[i]) floats; in the chain form
//           (param_shapes empty) problem.channels() floats each
//   inputs  inputs[i]: extra input i (input1, ...), elems(problem.input_shapes[i]) floats
struct ModelData {
  std::vector<float> input, weight, bias;
  std::vector<std::vector<float>> params, inputs;
};

// The element count each field of ModelData must have.
struct ModelSizes {
  int64_t input = 0, weight = 0, bias = 0;
  std::vector<int64_t> params, inputs;
};
[[nodiscard]] ModelSizes model_sizes(const spec::Problem& problem);

// Throws InputError naming the first field of `data` whose size is not model_sizes'.
void check_model_data(const spec::Problem& problem, const ModelData& data);

// PyTorch's fan-in of a module's weight, whose default initialisation (kaiming_uniform_ with
// a = sqrt(5)) draws the weight and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)): linear K;
// conv C/g T R S; transposed conv K/g T R S (torch reads it from the weight's dim 1). 0 for
// matmul, whose B is an input, not a module's weight.
[[nodiscard]] int64_t weight_fan_in(const spec::Problem& problem);

// Signed draws (issue 41): odd multiples of 2^-23 of the range, exact in fp32 and never 0.
// input, params and extra inputs U(-1, 1); a linear's or conv's weight and bias U(-b, b),
// b = 1/sqrt(weight_fan_in) as nn.Linear and nn.Conv*d initialise them (a matmul's B
// U(-1, 1), an input). The scale matters to the fp32 rule, whose 1e-4 is absolute near 0:
// with U(-1, 1) weights a K = 8192 output is sqrt(K) times its size in a model, and so is
// a correct fp32 dot product's rounding error (call 130: cuBLAS's fp32 GEMM failed the rule
// there, 2.6x on the worst element). Each field has its own stream, so a buffer depends only
// on (seed, its size, its range).
[[nodiscard]] ModelData draw_model_data(const spec::Problem& problem, uint64_t seed);

// Moves the biases of a share `fraction` of the main operator's output channels (dim 1: a conv's
// K, a linear's N) onto the epilogue's thresholds, as the conv2d chains' draws do
// (bias_placement.hpp), given the range the input was drawn from (its mean and variance) and the
// weights already in `data` (channel_weights). The epilogue is the chain form's, or in the general
// form its leading elementwise ops with scalar operands (what follows a norm or a reduction is not
// mapped back). Nothing moves for a matmul (no bias) or an epilogue without thresholds.
void place_model_biases(const spec::Problem& problem, ModelData& data, double fraction, XRange x);

}  // namespace fusetune::reference
