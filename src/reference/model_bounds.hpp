#pragma once
// The TF32 rule through any problem of model v2 on the CPU (docs/verification.md, "The
// version-2 stages"): each output's float64 value with the bound E on |out - ref| of a correct
// TF32 computation and the variance V of its expected error, from the main operator's sums
// (A, B over its terms) through every stage. The arithmetic is kernel_templates/ref_bounds.cuh's
// and kernel_templates/stages/stage_bounds.cuh's, which the GPU reference is to share.
#include "reference/cpu_reference.hpp"
#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// values: model_reference's (row-major, spec::out_shape); bound and var stored as the GPU
// reference stores them (fp32, rounded up; +inf: unchecked). For small shapes, like
// model_reference.
[[nodiscard]] BoundedReference model_reference_with_bounds(const spec::Problem& problem, const ModelData& data);

}  // namespace fusetune::reference
