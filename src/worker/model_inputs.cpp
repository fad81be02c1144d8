#include "worker/model_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "reference/problem_data.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::worker {

namespace {

std::span<const float> indexed(const std::vector<std::vector<float>>& all, const codegen::Buffer& b) {
  if (b.index < 0 || size_t(b.index) >= all.size())
    throw Error(ExitCode::failure, fmt::format("buffer {} ({} {}): the draw has {} of them", b.name,
                                               codegen::buffer_kind_name(b.kind), b.index, all.size()));
  return all[size_t(b.index)];
}

}  // namespace

reference::ModelData model_verification_draw(const spec::Problem& problem, uint64_t seed, int d) {
  reference::ModelData data = reference::draw_model_data(problem, seed + uint64_t(d));
  // |x| of an odd multiple of 2^-23 in (-1, 1) is one in (0, 1): exact, never 0, uniform.
  if (reference::verification_draw(d).x == reference::XRange::unit)
    for (float& v : data.input) v = std::fabs(v);
  return data;
}

std::span<const float> model_buffer_floats(const reference::ModelData& data, const codegen::Buffer& b) {
  std::span<const float> out;
  switch (b.kind) {
    case codegen::BufferKind::input: out = data.input; break;
    case codegen::BufferKind::weights: out = data.weight; break;
    case codegen::BufferKind::bias: out = data.bias; break;
    case codegen::BufferKind::param: out = indexed(data.params, b); break;
    case codegen::BufferKind::extra: out = indexed(data.inputs, b); break;
    case codegen::BufferKind::filters:
    case codegen::BufferKind::channels:
    case codegen::BufferKind::scratch:
      throw Error(ExitCode::failure, fmt::format("buffer {}: a {} buffer is not a version-2 input", b.name,
                                                 codegen::buffer_kind_name(b.kind)));
  }
  if (int64_t(out.size()) != b.floats())
    throw Error(ExitCode::failure, fmt::format("buffer {} {} holds {} floats, the draw's tensor {}", b.name,
                                               b.dims_text(), b.floats(), out.size()));
  return out;
}

std::optional<std::string> why_no_model_reference(const spec::Problem& problem) {
  const double macs = (problem.is_conv() ? problem.conv.flops() : problem.gemm.flops()) / 2.0;
  if (macs > kMaxReferenceMacs)
    return fmt::format("the float64 reference (on the GPU) is limited to {:.3g} multiply-adds of the main operator "
                       "per draw; this problem's take {:.3g}",
                       kMaxReferenceMacs, macs);
  const int64_t values = std::max(problem.main_out_elems(), spec::elems(spec::out_shape(problem)));
  if (values > kMaxReferenceValues)
    return fmt::format("the float64 reference's stages (on the CPU) hold at most {} values of an output per draw; "
                       "this problem's largest output has {}",
                       kMaxReferenceValues, values);
  return std::nullopt;
}

}  // namespace fusetune::worker
