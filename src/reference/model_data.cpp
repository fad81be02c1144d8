#include "reference/model_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>

#include "common/error.hpp"
#include "reference/bias_placement.hpp"
#include "reference/draw_rng.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

enum Stream : uint64_t { kInput = 1, kWeight = 2, kBias = 3, kParam0 = 16, kInput0 = 1024 };

// Signed values in (-b, b): odd multiples of b 2^-23 rounded to fp32 (exact when b is a power of
// 2), never 0. (problem_data.cpp's draws are tied to
// conv2d's ProblemData and its threshold placement; these are plain signed draws for any
// problem, from the same streams.)
std::vector<float> draw(int64_t count, uint64_t seed, uint64_t stream, double b = 1.0) {
  std::mt19937_64 g(detail::mix(seed, stream));
  std::vector<float> out(static_cast<std::size_t>(count));
  for (float& v : out) v = detail::symmetric(g, b);
  return out;
}

void expect(const char* what, std::size_t have, int64_t want) {
  if (int64_t(have) != want) {
    throw InputError(std::string("model reference: ") + what + " has " + std::to_string(have) +
                     " elements, expected " + std::to_string(want));
  }
}

// The chain the thresholds are read from: the chain form's own, or the general form's leading
// elementwise ops while their operands are scalars.
spec::Problem threshold_chain(const spec::Problem& p) {
  if (p.stages.empty()) return p;
  spec::Problem chain;
  for (const spec::Stage& st : p.stages) {
    if (st.kind != spec::StageKind::op) break;
    if (!std::all_of(st.op.args.begin(), st.op.args.end(), [](const spec::Operand& a) { return a.scalar(); })) break;
    chain.pre.push_back(st.op);
  }
  return chain;
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

int64_t weight_fan_in(const spec::Problem& p) {
  switch (p.main) {
    case spec::MainKind::linear: return p.gemm.k;
    case spec::MainKind::matmul: return 0;
    case spec::MainKind::conv2d:
    case spec::MainKind::conv3d: return (p.conv.c / p.conv.groups) * p.conv.t * p.conv.r * p.conv.s;
    case spec::MainKind::conv_transpose2d:
    case spec::MainKind::conv_transpose3d: return (p.conv.k / p.conv.groups) * p.conv.t * p.conv.r * p.conv.s;
  }
  return 0;
}

ModelData draw_model_data(const spec::Problem& p, uint64_t seed) {
  const ModelSizes s = model_sizes(p);
  const int64_t fan_in = weight_fan_in(p);
  const double b = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 1.0;
  ModelData d;
  d.input = draw(s.input, seed, kInput);
  d.weight = draw(s.weight, seed, kWeight, b);
  d.bias = draw(s.bias, seed, kBias, b);
  for (std::size_t i = 0; i < s.params.size(); ++i) d.params.push_back(draw(s.params[i], seed, kParam0 + i));
  for (std::size_t i = 0; i < s.inputs.size(); ++i) d.inputs.push_back(draw(s.inputs[i], seed, kInput0 + i));
  return d;
}

void place_model_biases(const spec::Problem& p, ModelData& d, double fraction, XRange x) {
  if (d.bias.empty() || !(fraction > 0.0)) return;
  check_model_data(p, d);
  const spec::Problem chain = threshold_chain(p);
  if (chain.pre.empty() && !chain.reduce && chain.post.empty()) return;
  const ChannelWeights w = channel_weights(p, d.weight);
  const int num_params = p.stages.empty() ? p.num_params : 0;
  const ChannelParams params = [&](int64_t k, double* out) {
    for (int i = 0; i < num_params; ++i) out[i] = d.params[size_t(i)][size_t(k)];
  };
  const std::span<float> bias(d.bias);
  const std::vector<bool> placed =
      place_biases_on_thresholds(chain, bias, w, num_params, params, fraction, x_mean(x));
  place_reduction_straddle(chain, bias, placed, w, num_params, params, x_mean(x), x_var(x));
}

}  // namespace fusetune::reference
