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

// The epilogue alone, applied to a given main output (main_out_elems() values, logical order):
// model_reference is epilogue_reference(main_output(...)). With fp32_between, every value is
// rounded to fp32 where an eager pipeline stores it (after each op and stage): with a main
// output computed as a TF32 kernel would, the emulation of a correct TF32 pipeline that the
// rule's tests check against the bounds (tests/model_bounds_test.cpp).
[[nodiscard]] std::vector<double> epilogue_reference(const spec::Problem& problem, const ModelData& data,
                                                     std::vector<double> main_out, bool fp32_between);

}  // namespace fusetune::reference
