#include "reference/model_data.hpp"

#include <cstddef>
#include <random>
#include <string>

#include "common/error.hpp"
#include "reference/draw_rng.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

enum Stream : uint64_t { kInput = 1, kWeight = 2, kBias = 3, kParam0 = 16, kInput0 = 1024 };

// Signed values in (-1, 1), odd multiples of 2^-23: never 0, exact in fp32. (problem_data.cpp's
// draws are tied to conv2d's ProblemData and its threshold placement; these are plain signed
// draws for any problem, from the same streams.)
std::vector<float> draw(int64_t count, uint64_t seed, uint64_t stream) {
  std::mt19937_64 g(detail::mix(seed, stream));
  std::vector<float> out(static_cast<std::size_t>(count));
  for (float& v : out) v = detail::symmetric(g, 1.0);
  return out;
}

void expect(const char* what, std::size_t have, int64_t want) {
  if (int64_t(have) != want) {
    throw InputError(std::string("model reference: ") + what + " has " + std::to_string(have) +
                     " elements, expected " + std::to_string(want));
  }
}

}  // namespace

ModelSizes model_sizes(const spec::Problem& p) {
  ModelSizes s;
  if (p.is_conv()) {
    s.input = p.conv.input_elems();
    s.weight = p.conv.weight_elems();
    s.bias = p.conv.bias ? p.conv.k : 0;
  } else {
    const spec::Gemm& g = p.gemm;
    s.input = g.batch * g.m * g.k;  // linear's batch is 1
    s.weight = g.batch * g.k * g.n;
    s.bias = g.bias ? g.n : 0;
  }
  if (p.stages.empty()) {
    s.params.assign(std::size_t(p.num_params), p.channels());
  } else {
    for (const spec::Shape& shape : p.param_shapes) s.params.push_back(spec::elems(shape));
  }
  for (const spec::Shape& shape : p.input_shapes) s.inputs.push_back(spec::elems(shape));
  return s;
}

void check_model_data(const spec::Problem& p, const ModelData& d) {
  const ModelSizes s = model_sizes(p);
  expect("input", d.input.size(), s.input);
  expect("weight", d.weight.size(), s.weight);
  expect("bias", d.bias.size(), s.bias);
  expect("params (count)", d.params.size(), int64_t(s.params.size()));
  for (std::size_t i = 0; i < s.params.size(); ++i) expect("a parameter", d.params[i].size(), s.params[i]);
  expect("inputs (count)", d.inputs.size(), int64_t(s.inputs.size()));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) expect("an extra input", d.inputs[i].size(), s.inputs[i]);
}

ModelData draw_model_data(const spec::Problem& p, uint64_t seed) {
  const ModelSizes s = model_sizes(p);
  ModelData d;
  d.input = draw(s.input, seed, kInput);
  d.weight = draw(s.weight, seed, kWeight);
  d.bias = draw(s.bias, seed, kBias);
  for (std::size_t i = 0; i < s.params.size(); ++i) d.params.push_back(draw(s.params[i], seed, kParam0 + i));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) d.inputs.push_back(draw(s.inputs[i], seed, kInput0 + i));
  return d;
}

}  // namespace fusetune::reference
