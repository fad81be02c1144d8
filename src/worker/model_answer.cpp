#include "worker/model_answer.hpp"

#include <algorithm>
#include <span>

#include "reference/l2_model.hpp"
#include "reference/model_bounds.hpp"

namespace fusetune::worker {

spec::Problem main_op_alone(const spec::Problem& problem) {
  spec::Problem p = problem;
  p.pre.clear();
  p.reduce.reset();
  p.post.clear();
  p.num_params = 0;
  p.stages.clear();
  p.param_shapes.clear();
  p.input_shapes.clear();
  p.num_values = 0;
  return p;
}

ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data) {
  ModelAnswers a;
  a.output = reference::model_reference_with_bounds(problem, data);
  reference::ModelData main_data;
  main_data.input = data.input;
  main_data.weight = data.weight;
  main_data.bias = data.bias;
  a.main = reference::model_reference_with_bounds(main_op_alone(problem), main_data);
  // As the conv2d draws measure it (worker/input_draws.cpp): every weight, and a sample of the
  // input of the same distribution (its first 2^20 values; all of a small one).
  const std::span<const float> x(data.input.data(), std::min<size_t>(data.input.size(), size_t(1) << 20));
  a.var_scale = reference::var_scale(x, data.weight);
  return a;
}

}  // namespace fusetune::worker
