#include "reference/model_reference.hpp"

#include <cstddef>
#include <string>

#include "common/error.hpp"
#include "reference/model_main.hpp"
#include "reference/model_stages.hpp"
#include "reference/op_math.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::reference {
namespace {

using detail::Tensor;

Tensor tensor_of(const spec::Shape& shape, const std::vector<float>& values) {
  return {shape, std::vector<double>(values.begin(), values.end())};
}

// The chain form: pre ops (parameters per index along dim 1), a reduction over dim 1 with
// keepdim, post ops -- cpu_reference.cpp's loop for any main operator's output.
// fp32: every value rounded to fp32 where an eager pipeline stores it (after each op and
// stage), the emulation of a correct fp32 pipeline the rule's tests run (model_bounds.hpp).
void round_fp32(Tensor& x, bool fp32) {
  if (!fp32) return;
  for (double& v : x.v) v = double(float(v));
}

Tensor run_chain(const spec::Problem& p, const ModelData& d, Tensor x, bool fp32) {
  const int64_t C = x.shape[1];
  int64_t inner = 1;
  for (std::size_t i = 2; i < x.shape.size(); ++i) inner *= x.shape[i];
  const auto np = std::size_t(p.num_params);
  std::vector<double> chan(np * std::size_t(C));  // [c][param]
  for (std::size_t i = 0; i < np; ++i) {
    for (int64_t c = 0; c < C; ++c) chan[std::size_t(c) * np + i] = d.params[i][std::size_t(c)];
  }
  for (std::size_t e = 0; e < x.v.size(); ++e) {
    const double* chan_c = chan.data() + std::size_t((int64_t(e) / inner) % C) * np;
    for (const spec::Op& op : p.pre) {
      x.v[e] = apply_op(op, x.v[e], chan_c);
      if (fp32) x.v[e] = double(float(x.v[e]));
    }
  }
  if (p.reduce) x = detail::reduce(x, *p.reduce, {1}, true);
  round_fp32(x, fp32);
  for (double& v : x.v) {
    for (const spec::Op& op : p.post) {
      v = apply_op(op, v, nullptr);
      if (fp32) v = double(float(v));
    }
  }
  return x;
}

// The tensors an op stage reads besides the value: one per argument, null for a scalar.
std::vector<const Tensor*> operands(const spec::Op& op, const std::vector<Tensor>& params,
                                    const std::vector<Tensor>& values, const std::vector<Tensor>& inputs) {
  std::vector<const Tensor*> out;
  for (const spec::Operand& a : op.args) {
    if (a.value_index >= 0) out.push_back(&values.at(std::size_t(a.value_index)));
    else if (a.input_index >= 0) out.push_back(&inputs.at(std::size_t(a.input_index)));
    else if (a.per_channel) out.push_back(&params.at(std::size_t(a.param_index)));
    else out.push_back(nullptr);
  }
  return out;
}

const Tensor* param_or_null(const std::vector<Tensor>& params, int index) {
  return index >= 0 ? &params.at(std::size_t(index)) : nullptr;
}

Tensor run_stages(const spec::Problem& p, const ModelData& d, Tensor x, bool fp32) {
  std::vector<Tensor> params, inputs, values(std::size_t(p.num_values));
  for (std::size_t i = 0; i < p.param_shapes.size(); ++i) params.push_back(tensor_of(p.param_shapes[i], d.params[i]));
  for (std::size_t i = 0; i < p.input_shapes.size(); ++i) inputs.push_back(tensor_of(p.input_shapes[i], d.inputs[i]));
  std::vector<spec::Shape> value_shapes;
  for (const spec::Stage& st : p.stages) {
    switch (st.kind) {
      case spec::StageKind::op: {
        // the output shape by spec's rules, so the reference and the parser cannot disagree
        for (const Tensor& v : values) value_shapes.push_back(v.shape);
        const spec::Shape shape = spec::stage_shape(p, st, x.shape, value_shapes);
        value_shapes.clear();
        x = detail::elementwise(st.op, x, operands(st.op, params, values, inputs), shape);
        break;
      }
      case spec::StageKind::reduce: x = detail::reduce(x, st.reduce, st.dims, st.keepdim); break;
      case spec::StageKind::logsumexp: x = detail::logsumexp(x, st.dims, st.keepdim); break;
      case spec::StageKind::softmax: x = detail::softmax(x, st.dims.at(0), false); break;
      case spec::StageKind::log_softmax: x = detail::softmax(x, st.dims.at(0), true); break;
      case spec::StageKind::pool: x = detail::pool(x, st); break;
      case spec::StageKind::norm:
        x = detail::norm(x, st, param_or_null(params, st.weight_param), param_or_null(params, st.bias_param));
        break;
      case spec::StageKind::name: values.at(std::size_t(st.value_index)) = x; break;
    }
    round_fp32(x, fp32);
  }
  return x;
}

}  // namespace

std::vector<double> main_output(const spec::Problem& p, const ModelData& d) {
  check_model_data(p, d);
  const float* bias = d.bias.empty() ? nullptr : d.bias.data();
  switch (p.main) {
    case spec::MainKind::conv2d:
    case spec::MainKind::conv3d:
    case spec::MainKind::conv_transpose2d:
    case spec::MainKind::conv_transpose3d:
      return detail::conv_any(p.conv, d.input.data(), d.weight.data(), bias);
    case spec::MainKind::linear:
    case spec::MainKind::matmul:
      return detail::gemm_any(p.gemm, p.main == spec::MainKind::linear, d.input.data(), d.weight.data(), bias);
  }
  throw InputError("model reference: unknown main operator " + std::to_string(int(p.main)));
}

std::vector<double> model_reference(const spec::Problem& p, const ModelData& d) {
  return epilogue_reference(p, d, main_output(p, d), false);
}

std::vector<double> epilogue_reference(const spec::Problem& p, const ModelData& d, std::vector<double> main,
                                       bool fp32_between) {
  check_model_data(p, d);
  if (int64_t(main.size()) != p.main_out_elems()) {
    throw InputError("model reference: the main output has " + std::to_string(main.size()) + " values, expected " +
                     std::to_string(p.main_out_elems()));
  }
  Tensor x{p.main_shape(), std::move(main)};
  round_fp32(x, fp32_between);
  x = p.stages.empty() ? run_chain(p, d, std::move(x), fp32_between) : run_stages(p, d, std::move(x), fp32_between);
  const spec::Shape want = spec::out_shape(p);
  if (x.shape != want) {
    throw InputError("model reference: the output has shape " + spec::shape_text(x.shape) + ", spec says " +
                     spec::shape_text(want));
  }
  return std::move(x.v);
}

}  // namespace fusetune::reference
