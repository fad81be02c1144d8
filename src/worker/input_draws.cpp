#include "worker/input_draws.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "gpu/cudnn_transform.hpp"
#include "reference/l2_model.hpp"
#include "reference/model_data.hpp"
#include "reference/model_samples.hpp"
#include "reference/problem_data.hpp"
#include "spec/shape_rules.hpp"
#include "worker/context_lost.hpp"
#include "worker/model_answer.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::worker {

namespace {

// NCHW -> NHWC on the host, for the KRSC filters (done once per draw, outside anything timed;
// the inputs, thousands of times larger, are transformed on the GPU).
std::vector<float> to_nhwc(const std::vector<float>& src, int64_t n, int64_t c, int64_t hw) {
  std::vector<float> dst(src.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* s = src.data() + (i * c + ch) * hw;
      float* d = dst.data() + i * c * hw + ch;
      for (int64_t p = 0; p < hw; ++p) d[p * c] = s[p];
    }
  return dst;
}

gpu::DeviceBuffer upload(const std::vector<float>& host) {
  gpu::DeviceBuffer b(std::max<size_t>(4, 4 * host.size()));
  if (!host.empty()) b.upload(std::span<const float>(host));
  return b;
}

}  // namespace

InputDraws::InputDraws(const spec::Problem& problem, reference::GpuReference& ref, const gpu::CudnnHandle& cudnn,
                       uint64_t seed, int count, protocol::InputRange inputs, bool whole_answers, CUstream s)
    : problem_(problem) {
  if (!problem.is_conv2d_chain()) {
    // Version 2: every tensor drawn on the host and uploaded, the main operator's float64 terms
    // computed on the GPU from the uploaded tensors, the stages run on the CPU from them (the
    // caller has refused problems past the limits: worker::why_no_model_reference).
    if (inputs == protocol::InputRange::wide)
      throw InputError("wide-range draws (accuracy tests) are drawn for conv2d chain problems only");
    // Past the whole reference's limits, each draw's answers cover one block of images
    // (model_inputs.hpp, reference/model_samples.hpp); `ref` was built for that block's problem.
    const int64_t images = model_sample_images(problem);
    for (int d = 0; d < count; ++d) {
      Draw dr;
      dr.model = std::make_unique<ModelDraw>(problem, seed, d);
      ModelAnswers a;
      if (images == 0) {
        a = model_answers(problem, dr.model->host(), ref.main_terms(dr.model->input(), dr.model->weight(), s),
                          ref.math());
      } else {
        const int64_t n = reference::sample_batch(problem);
        dr.sample = reference::sampled_block(n, images, spec::elems(spec::out_shape(problem)) / n, d);
        const reference::SampleOffsets at = reference::sample_offsets(problem, *dr.sample);
        a = model_answers(reference::sample_problem(problem, images),
                          reference::sample_data(problem, dr.model->host(), *dr.sample),
                          ref.main_terms(dr.model->input() + 4 * CUdeviceptr(at.input),
                                         dr.model->weight() + 4 * CUdeviceptr(at.weight), s),
                          ref.math());
      }
      dr.var_scale = a.var_scale;
      dr.answer.emplace();
      dr.answer->output = upload_answer(a.output, a.var_scale);
      dr.answer->conv = upload_answer(a.main, a.var_scale);
      sync_or_lose(fmt::format("input draw {}", d));
      draws_.push_back(std::move(dr));
    }
    return;
  }
  const auto& c = problem.conv;
  for (int d = 0; d < count; ++d) {
    // Weights and per-channel vectors come from the host generator (it places conv biases on
    // the epilogue's thresholds in the later draws); they depend only on (seed, K, C, R, S),
    // so a one-image copy of the problem keeps the host work small. x is drawn on the device.
    // A wide-range draw (accuracy tests, small shapes) is all drawn on the host.
    // Draw d's x range and bias placement: reference::verification_draw (draw 0 like torch.rand,
    // draw 1 signed, ...), the same rule the CPU tests use.
    spec::Problem small = problem;
    small.conv.n = 1;
    const reference::DrawPlan plan = reference::verification_draw(d);
    const auto host = inputs == protocol::InputRange::wide ? reference::make_wide_range_data(problem, seed + uint64_t(d))
                                                           : reference::make_verification_draw(small, seed, d);
    Draw dr;
    const size_t x_elems = size_t(c.input_elems());
    if (inputs == protocol::InputRange::wide) {
      dr.x_nchw = upload(host.x);
    } else {
      dr.x_nchw = gpu::DeviceBuffer(4 * x_elems);
      ref.fill_uniform(dr.x_nchw.ptr(), x_elems, (seed + uint64_t(d)) * 0x9E3779B97F4A7C15ull, reference::x_lo(plan.x),
                       reference::x_hi(plan.x), s);
    }
    dr.w = upload(host.w);
    dr.w_krsc = upload(to_nhwc(host.w, c.k, c.c, c.r * c.s));
    dr.chan = upload(host.chan);
    dr.has_chan = !host.chan.empty();
    dr.x_nhwc = gpu::DeviceBuffer(4 * x_elems);
    gpu::transform_layout(cudnn, dr.x_nchw.ptr(), spec::Layout::nchw, dr.x_nhwc.ptr(), spec::Layout::nhwc, c.n, c.c,
                          c.h, c.w);
    // The L2 limit's model scaled to these inputs: every filter value, and the host's x (one image
    // of the same distribution as the device's x; all of it for a wide-range draw).
    dr.var_scale = reference::var_scale(host.x, host.w);
    if (whole_answers) {
      dr.answer = ref.compute(dr.x_nchw.ptr(), dr.w.ptr(), dr.chan_or_0(), true, s);
      dr.answer->output.var_scale = dr.var_scale;
      if (dr.answer->conv) dr.answer->conv->var_scale = dr.var_scale;
    }
    sync_or_lose(fmt::format("input draw {}", d));
    draws_.push_back(std::move(dr));
  }
}

CUdeviceptr InputDraws::input(int d, const codegen::Buffer& b) const {
  const Draw& dr = draw(d);
  if (dr.model) return dr.model->bind(b);
  switch (b.kind) {
    case codegen::BufferKind::input: return problem_.conv.in == spec::Layout::nhwc ? dr.x_nhwc.ptr() : dr.x_nchw.ptr();
    case codegen::BufferKind::filters: return dr.w.ptr();
    case codegen::BufferKind::channels: return dr.chan.ptr();
    case codegen::BufferKind::scratch: break;
    case codegen::BufferKind::weights:
    case codegen::BufferKind::bias:
    case codegen::BufferKind::param:
    case codegen::BufferKind::extra:
      throw Error(ExitCode::failure, fmt::format("InputDraws::input: a {} buffer (a version-2 plan) for a conv2d "
                                                 "chain problem",
                                                 codegen::buffer_kind_name(b.kind)));
  }
  throw Error(ExitCode::failure, "InputDraws::input: a scratch buffer is not an input");
}

double InputDraws::input_bytes(const spec::Problem& problem) {
  if (!problem.is_conv2d_chain()) {
    const reference::ModelSizes s = reference::model_sizes(problem);
    double floats = double(s.input + s.weight + s.bias);
    for (int64_t n : s.params) floats += double(n);
    for (int64_t n : s.inputs) floats += double(n);
    return 4.0 * floats;
  }
  const auto& c = problem.conv;
  return 4.0 * (2.0 * double(c.input_elems()) + 2.0 * double(c.weight_elems()) +
                double(reference::chan_elems(problem)) + 1);
}

}  // namespace fusetune::worker
