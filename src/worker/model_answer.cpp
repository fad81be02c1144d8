#include "worker/model_answer.hpp"

#include <algorithm>
#include <span>

#include "reference/l2_model.hpp"
#include "reference/model_bounds.hpp"
#include "reference/model_data.hpp"

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

ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data, MathMode math) {
  reference::check_model_data(problem, data);
  return model_answers(problem, data, reference::detail::main_terms(problem, data), math);
}

ModelAnswers model_answers(const spec::Problem& problem, const reference::ModelData& data,
                           const reference::detail::MainTerms& terms, MathMode math) {
  ModelAnswers a;
  a.output = reference::model_reference_with_terms(problem, data, terms, math);
  // The main operator alone reads only the bias beside the terms (no input or weight copies).
  reference::ModelData main_data;
  main_data.bias = data.bias;
  a.main = reference::model_reference_with_terms(main_op_alone(problem), main_data, terms, math);
  // As the conv2d draws measure it (worker/input_draws.cpp): every weight, and a sample of the
  // input of the same distribution (its first 2^20 values; all of a small one).
  const std::span<const float> x(data.input.data(), std::min<size_t>(data.input.size(), size_t(1) << 20));
  a.var_scale = reference::var_scale(x, data.weight);
  return a;
}

}  // namespace fusetune::worker
