#pragma once
// The TF32 rule through any problem of model v2 on the CPU (docs/verification.md, "The
// version-2 stages"): each output's float64 value with the bound E on |out - ref| of a correct
// TF32 computation and the variance V of its expected error, from the main operator's sums
// (A, B over its terms) through every stage. The arithmetic is kernel_templates/ref_bounds.cuh's
// and kernel_templates/stages/stage_bounds.cuh's, which the GPU reference is to share.
#include "reference/cpu_reference.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// values: model_reference's (row-major, spec::out_shape); bound and var stored as the GPU
// reference stores them (fp32, rounded up; +inf: unchecked). For small shapes, like
// model_reference.
// The main operator's terms come from detail::main_terms (the CPU, threaded). `math` picks the
// main operator's V0: the TF32 rule's, or under fp32 the fp32 rule's dot-product term
// (ref_bounds.cuh ft_var_main), carried through the stages alike.
[[nodiscard]] BoundedReference model_reference_with_bounds(const spec::Problem& problem, const ModelData& data,
                                                           MathMode math = MathMode::tf32);

// The same from terms computed elsewhere (the GPU: reference/gpu_main_terms.hpp): the stages
// run on the CPU from them. Given detail::main_terms(problem, data) it is
// model_reference_with_bounds exactly. data.input and data.weight are not read (their terms
// stand in for them) and may be empty; the bias, parameters and extra inputs must be the
// problem's. Throws InputError when the terms are not of the main output's size.
[[nodiscard]] BoundedReference model_reference_with_terms(const spec::Problem& problem, const ModelData& data,
                                                          const detail::MainTerms& terms,
                                                          MathMode math = MathMode::tf32);

}  // namespace fusetune::reference
