#pragma once
// A candidate's output of one input draw against the float64 reference: with the draw's whole
// answer (computed once at setup) or, when verification is sliced by images
// (verify_memory.hpp), with the answer of each slice of images computed now and compared with
// that slice of the output, the slices' sums merged into the figures one whole comparison gives
// (reference/image_slices.hpp); a version-2 draw past the whole reference's limits with the answer
// of its block of images, and the whole output searched for unwritten elements. Every comparison
// in the worker goes through here: a variant's
// verification (its output, or a floor's conv alone) and cuDNN's conv check.
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/image_slices.hpp"
#include "spec/problem.hpp"
#include "worker/input_draws.hpp"

namespace fusetune::worker {

// Which reference an output is held to.
enum class Answer {
  output,  // the problem's output
  conv,    // the conv alone, without bias: the floors' and cuDNN's conv check's
};

class ReferenceCheck {
 public:
  // slice_images 0: the draws keep whole answers. Else slices of that many images, each with a
  // GpuReference compiled for it (a second one for a shorter last slice): built here, for `arch`.
  ReferenceCheck(const spec::Problem& problem, MathMode math, const std::string& arch, InputDraws& draws,
                 reference::GpuReference& whole, int64_t slice_images, CUstream s);
  ~ReferenceCheck();
  ReferenceCheck(const ReferenceCheck&) = delete;
  ReferenceCheck& operator=(const ReferenceCheck&) = delete;

  // out: the candidate's output of draw d (NCHW, or NHWC when out_nhwc), with the elements of
  // `which`. Synchronizes the stream.
  [[nodiscard]] reference::GpuErrorStats compare(int d, Answer which, CUdeviceptr out, bool out_nhwc);

  [[nodiscard]] bool sliced() const { return !slices_.empty(); }
  // The slices (empty when whole), for the setup's note.
  [[nodiscard]] const std::vector<reference::ImageSlice>& slices() const { return slices_; }

 private:
  // A version-2 draw whose answer covers a block of images (Draw::sample).
  [[nodiscard]] reference::GpuErrorStats compare_sample(const Draw& draw, Answer which, CUdeviceptr out);
  [[nodiscard]] reference::GpuErrorStats compare_sliced(const Draw& draw, Answer which, CUdeviceptr out,
                                                        bool out_nhwc);

  spec::Problem problem_;
  MathMode math_;
  InputDraws& draws_;
  reference::GpuReference& whole_;
  CUstream stream_;
  std::vector<reference::ImageSlice> slices_;
  std::unique_ptr<reference::GpuReference> slice_ref_;  // n = slices_[0].images
  std::unique_ptr<reference::GpuReference> last_ref_;   // n = the shorter last slice's, if any
};

}  // namespace fusetune::worker
