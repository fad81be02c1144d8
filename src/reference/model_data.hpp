#pragma once
// Host inputs of a problem of model v2 (any main operator, either epilogue form), in logical
// order, for the float64 model reference (model_reference.hpp) and tests.
#include <cstdint>
#include <vector>

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

// Every value U(-1, 1), signed (issue 41): odd multiples of 2^-23, exact in fp32 and never 0.
// Each field has its own stream, so a buffer depends only on (seed, its size).
[[nodiscard]] ModelData draw_model_data(const spec::Problem& problem, uint64_t seed);

}  // namespace fusetune::reference
