#include "worker/reference_check.hpp"

#include <optional>
#include <utility>

#include "reference/bounds.hpp"
#include "reference/model_samples.hpp"
#include "spec/shape_rules.hpp"
#include "worker/buffer_pool.hpp"

namespace fusetune::worker {

ReferenceCheck::ReferenceCheck(const spec::Problem& problem, MathMode math, const std::string& arch,
                               InputDraws& draws, reference::GpuReference& whole, int64_t slice_images, CUstream s)
    : problem_(problem), math_(math), draws_(draws), whole_(whole), stream_(s) {
  if (slice_images <= 0) return;
  slices_ = reference::image_slices(problem.conv.n, slice_images);
  // Both compiles at once: NVRTC needs no context, the second overlaps the first's load.
  std::optional<reference::RefCompiles> last;
  if (slices_.back().images != slices_.front().images)
    last.emplace(reference::slice_problem(problem, slices_.back().images), arch, math);
  slice_ref_ = std::make_unique<reference::GpuReference>(reference::slice_problem(problem, slices_.front().images),
                                                         arch, math);
  if (last)
    last_ref_ = std::make_unique<reference::GpuReference>(reference::slice_problem(problem, slices_.back().images),
                                                          math, std::move(*last));
}

ReferenceCheck::~ReferenceCheck() = default;

reference::GpuErrorStats ReferenceCheck::compare(int d, Answer which, CUdeviceptr out, bool out_nhwc) {
  const Draw& draw = draws_.draw(d);
  if (sliced()) return compare_sliced(draw, which, out, out_nhwc);
  if (draw.sample) return compare_sample(draw, which, out);
  const reference::RefAnswer& a = *draw.answer;
  switch (which) {
    case Answer::output: return whole_.compare(out, out_nhwc, a.output, stream_);
    case Answer::conv: return whole_.compare(out, out_nhwc, *a.conv, stream_);
  }
  return {};
}

reference::GpuErrorStats ReferenceCheck::compare_sample(const Draw& draw, Answer which, CUdeviceptr out) {
  const bool main = which == Answer::conv;
  const auto total = uint64_t(main ? problem_.main_out_elems() : spec::elems(spec::out_shape(problem_)));
  const uint64_t first = uint64_t(draw.sample->first) * (total / uint64_t(reference::sample_batch(problem_)));
  const reference::RefArrays& answer = main ? *draw.answer->conv : draw.answer->output;
  // The block against its float64 answer (the output's rows from image `first` on)...
  reference::GpuErrorStats st = whole_.compare(out + 4 * first, false, answer, stream_);
  if (st.first_bad != reference::GpuErrorStats::kNone) st.first_bad += first;
  // ...and every element outside it written: the verifier poisoned the output with the sentinel
  // before the run, so an element that still holds it was never written (a legitimate NaN output
  // of exactly that bit pattern would be counted too; the sentinel's payload makes that unlikely).
  // The block's own were counted by its comparison (NaN where the reference is finite).
  const auto unwritten = [&](CUdeviceptr at, uint64_t n) { return n - whole_.check_u32(at, n, kSentinelWord, stream_); };
  const uint64_t outside = unwritten(out, total) - unwritten(out + 4 * first, answer.count);
  st.nonfinite += outside;
  st.mismatches += outside;
  return st;
}

reference::GpuErrorStats ReferenceCheck::compare_sliced(const Draw& draw, Answer which, CUdeviceptr out,
                                                        bool out_nhwc) {
  const spec::Conv& c = problem_.conv;
  const bool conv_alone = which == Answer::conv;
  // Elements of one image: of the output (K or 1 channels) or of the conv alone (K).
  const uint64_t per_image = uint64_t(conv_alone ? c.conv_out_elems() : problem_.out_elems()) / uint64_t(c.n);
  const uint64_t x_per_image = uint64_t(c.c * c.h * c.w);
  ft_compare_acc total = ft_compare_acc_zero();
  for (const reference::ImageSlice& sl : slices_) {
    reference::GpuReference& ref = sl.images == slices_.front().images ? *slice_ref_ : *last_ref_;
    const uint64_t first = uint64_t(sl.first);
    // The slice's answer lives only for this comparison: the next slice's takes its memory.
    const reference::RefAnswer a =
        ref.compute(draw.x_nchw.ptr() + 4 * first * x_per_image, draw.w.ptr(), draw.chan_or_0(), conv_alone, stream_);
    const reference::RefArrays& arrays = conv_alone ? *a.conv : a.output;
    // Image n is outermost in either layout: the slice's output starts at the same element.
    reference::merge_slice(total, ref.compare_sums(out + 4 * first * per_image, out_nhwc, arrays, stream_),
                           first * per_image);
  }
  return reference::finish_compare(total, per_image * uint64_t(c.n), math_, draw.var_scale);
}

}  // namespace fusetune::worker
