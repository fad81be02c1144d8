#pragma once
// What the outputs of a version-2 draw are held to (docs/verification.md): the float64 CPU
// reference with the TF32 rule's per-element bounds (reference::model_reference_with_bounds),
//   output  of the whole problem, for `unfused` and every solution;
//   main    of the main operator alone, with its bias, for the floor (`cublaslt.gemm`,
//           `cudnn.conv-nd`): its plan is the main step alone with the bias as the vendor's
//           epilogue, so it is held to exactly what it computes -- as a conv2d floor, which runs
//           the conv without bias, is held to the conv without bias (Answer::conv).
// Both row-major, compared element by element with the rules every candidate is held to. GPU-free
// (tests/model_answer_test.cpp); worker/model_draw.cpp uploads them for the device comparison.
#include "reference/cpu_reference.hpp"
#include "reference/model_data.hpp"
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

// Both answers for one draw (threaded, like the reference's convs). Throws InputError when
// `data` is not a draw of `problem` (reference::check_model_data).
[[nodiscard]] ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data);

}  // namespace fusetune::worker
