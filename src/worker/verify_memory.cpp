#include "worker/verify_memory.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/image_slices.hpp"
#include "spec/shape_rules.hpp"
#include "worker/model_inputs.hpp"
#include "worker/input_draws.hpp"

namespace fusetune::worker {

namespace {

// One answer with the conv-alone answer beside it: the peak of any comparison (a floor's, or
// cuDNN's conv check, asks for the conv alone; GpuReference::compute keeps both then).
double answer_bytes(const spec::Problem& p, int64_t images) {
  return double(reference::GpuReference::answer_bytes(reference::slice_problem(p, images), true));
}

[[noreturn]] void refuse(double need, double free_bytes) {
  throw InputError(fmt::format("problem needs about {:.1f} GB of device memory for verification, {:.1f} GB free",
                               need / 1e9, free_bytes / 1e9));
}

// A version-2 problem (never sliced: its answers are made whole on the host): the inputs and two
// answers per draw (the output's and the main operator's alone: doubles, bounds and variances),
// and plan buffers of about four of the larger of the two outputs. The main operator's float64
// terms are not counted: they are made in chunks sized to the memory free at the time and freed
// before the draw's answers are uploaded (reference/gpu_main_terms.hpp).
// Past the whole reference's limits the answers cover a block of images (model_inputs.hpp).
double model_need(const spec::Problem& p, int draws) {
  const double out = double(spec::elems(spec::out_shape(p))), main = double(p.main_out_elems());
  const spec::Problem answered = model_reference_problem(p);
  const double a_out = double(spec::elems(spec::out_shape(answered))), a_main = double(answered.main_out_elems());
  return draws * (InputDraws::input_bytes(p) + 16.0 * (a_out + a_main)) + 4.0 * 4.0 * std::max(out, main);
}

}  // namespace

double fixed_bytes(const spec::Problem& p, int draws) {
  const auto& c = p.conv;
  return draws * InputDraws::input_bytes(p) + 4 * 4.0 * double(c.conv_out_elems()) + 4.0 * double(c.input_elems());
}

VerifyMemory plan_verify_memory(const spec::Problem& p, int draws, double free_bytes,
                                int64_t forced_slice_images) {
  const double usable = kUsableShare * free_bytes;
  if (!p.is_conv2d_chain()) {
    const double need = model_need(p, draws);
    if (need > usable) refuse(need, free_bytes);
    return {0, need};
  }
  const int64_t n = p.conv.n;
  const double fixed = fixed_bytes(p, draws);
  const bool sliceable = reference::sliceable_by_images(p);
  const double whole = fixed + draws * answer_bytes(p, n);
  if (sliceable && forced_slice_images > 0) {
    const int64_t s = std::min(forced_slice_images, n);
    const double need = fixed + answer_bytes(p, s);
    if (need > usable) refuse(need, free_bytes);
    return {s, need, true};
  }
  if (whole <= usable) return {0, whole};
  if (!sliceable) refuse(whole, free_bytes);
  const double budget = kSliceShare * (usable - fixed);
  const int64_t s =
      reference::most_images_within(n, budget, [&](int64_t images) { return answer_bytes(p, images); });
  // Refused with what one image's slice needs as the budget counts it (twice its answer).
  if (s == 0) refuse(fixed + answer_bytes(p, 1) / kSliceShare, free_bytes);
  return {s, fixed + answer_bytes(p, s)};
}

}  // namespace fusetune::worker
