#include "worker/model_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "reference/model_samples.hpp"
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
  const reference::DrawPlan plan = reference::verification_draw(d);
  // A matmul's B is an input too (torch.rand in KernelBench), so it takes the input's range.
  const bool b_is_input = problem.main == spec::MainKind::matmul;
  if (plan.x == reference::XRange::unit) {
    for (float& v : data.input) v = std::fabs(v);
    if (b_is_input)
      for (float& v : data.weight) v = std::fabs(v);
  }
  // Positive weights (draw 2), as the conv2d chains' draw 2: every product of the main operator
  // has one sign, so an error that has one -- inputs truncated to TF32 instead of rounded, the
  // tensor cores' truncating accumulation -- grows with the sum instead of averaging out (call
  // 129: a fused GEMM truncating to TF32 passed every draw with signed weights).
  if (plan.filters == reference::Filters::positive)
    for (float& v : data.weight) v = std::fabs(v);
  // Half the biases on the epilogue's thresholds from draw 1 on (call 131's #9: relu((y - 2) 1.5)
  // at nn.Linear's scale was 0 almost everywhere on the draws without them).
  reference::place_model_biases(problem, data, plan.threshold_fraction, plan.x);
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

namespace {

double main_macs(const spec::Problem& p) { return (p.is_conv() ? p.conv.flops() : p.gemm.flops()) / 2.0; }

bool within_limits(const spec::Problem& p) {
  return main_macs(p) <= kMaxReferenceMacs && reference::largest_output(p) <= kMaxReferenceValues;
}

}  // namespace

int64_t model_sample_images(const spec::Problem& problem) {
  if (within_limits(problem) || reference::why_images_not_independent(problem)) return 0;
  const int64_t n = reference::sample_batch(problem);
  const double macs_per_image = main_macs(problem) / double(n);
  const auto by_macs = int64_t(kMaxReferenceMacs / std::max(1.0, macs_per_image));
  return std::clamp<int64_t>(std::min(reference::sample_images(problem, kMaxSampleValues), by_macs),
                             reference::least_sample(problem), n);
}

spec::Problem model_reference_problem(const spec::Problem& problem) {
  const int64_t images = model_sample_images(problem);
  return images > 0 ? reference::sample_problem(problem, images) : problem;
}

std::optional<std::string> why_no_model_reference(const spec::Problem& problem) {
  if (within_limits(problem)) return std::nullopt;
  const double macs = main_macs(problem);
  const int64_t values = reference::largest_output(problem);
  std::string why = macs > kMaxReferenceMacs
                        ? fmt::format("the float64 reference (on the GPU) is limited to {:.3g} multiply-adds of the "
                                      "main operator per draw; this problem's take {:.3g}",
                                      kMaxReferenceMacs, macs)
                        : fmt::format("the float64 reference's stages (on the CPU) hold at most {} values of an "
                                      "output per draw; this problem's largest output has {}",
                                      kMaxReferenceValues, values);
  if (const auto apart = reference::why_images_not_independent(problem))
    return why + "; and its images cannot be checked apart: " + *apart;
  // One image alone past the limits: no block is small enough.
  const spec::Problem one = reference::sample_problem(problem, reference::least_sample(problem));
  if (!within_limits(one))
    return why + fmt::format("; and its smallest block of images alone has {:.3g} multiply-adds and {} values", main_macs(one),
                             reference::largest_output(one));
  return std::nullopt;
}

}  // namespace fusetune::worker
