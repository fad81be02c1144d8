#pragma once
// The float64 CPU reference of any problem of model v2 (issue 43): every main operator and
// both epilogue forms, as PyTorch eager computes them in float64 (training-mode BatchNorm,
// stable softmax and logsumexp, pooling in floor mode). For small shapes: tests, `smoke`,
// cross-checking the GPU reference. For conv2d chain problems it equals reference_output
// (cpu_reference.hpp) on the same numbers.
#include <vector>

#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The main operator alone (with its bias), in logical order, shape problem.main_shape().
// Throws InputError when data's sizes are not model_sizes(problem)'s.
[[nodiscard]] std::vector<double> main_output(const spec::Problem& problem, const ModelData& data);

// The whole problem (as spec::parse builds it), shape spec::out_shape(problem), row-major.
// Scalars are applied as fp32 numbers and every op means what op_math.hpp says (the
// executable spec of the ops).
[[nodiscard]] std::vector<double> model_reference(const spec::Problem& problem, const ModelData& data);

}  // namespace fusetune::reference
