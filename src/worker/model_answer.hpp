#pragma once
// What the outputs of a version-2 draw are held to (docs/verification.md): the float64
// reference with the TF32 rule's per-element bounds, from the main operator's terms (the GPU's in
// the worker, reference::GpuReference::main_terms; the CPU's in tests) through the stages on the
// CPU (reference::model_reference_with_terms),
//   output  of the whole problem, for `unfused` and every solution;
//   main    of the main operator alone, with its bias, for the floor (`cublaslt.gemm`,
//           `cudnn.conv-nd`): its plan is the main step alone with the bias as the vendor's
//           epilogue, so it is held to exactly what it computes -- as a conv2d floor, which runs
//           the conv without bias, is held to the conv without bias (Answer::conv).
// Both row-major, compared element by element with the rules every candidate is held to. Both come
// from one set of terms: the main operator runs once per draw. GPU-free
// (tests/model_inputs_test.cpp); worker/model_draw.cpp uploads them for the device comparison.
#include "reference/cpu_reference.hpp"
#include "common/math_mode.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/problem.hpp"

namespace fusetune::worker {

struct ModelAnswers {
  reference::BoundedReference output;  // spec::out_shape(problem)
  reference::BoundedReference main;    // problem.main_shape()
  // tf32: kappa of these inputs (reference/l2_model.hpp), the drawn values' TF32 rounding variance
  // over the model's, for the rel-L2 limit of both answers
  double var_scale = 1.0;
};

// The problem without its epilogue: the main operator alone, with its bias (no parameters, extra
// inputs or named values).
[[nodiscard]] spec::Problem main_op_alone(const spec::Problem& problem);

// Both answers for one draw from the main operator's terms of it (`terms`: computed on the GPU by
// the worker), with `math`'s variances (the fp32 rule's dot-product term under fp32). Throws
// InputError when `data` is not a draw of `problem` or the terms are not of its main output's size.
[[nodiscard]] ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data,
                                         const reference::detail::MainTerms& terms, MathMode math = MathMode::tf32);

// The same with the terms from the CPU (threaded; small shapes, tests and GPU-free callers).
[[nodiscard]] ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data,
                                         MathMode math = MathMode::tf32);

}  // namespace fusetune::worker
