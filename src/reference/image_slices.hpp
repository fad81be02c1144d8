#pragma once
// Verification sliced by images, the arithmetic of it (GPU-free, so it is unit-tested): a v1
// problem (conv2d, a chain epilogue, a reduction only over channels) is independent per image,
// and image n is the outermost dimension of its input and of its output in either layout. So the
// float64 reference of images [first, first + images) is the reference of the same problem with
// n = images on x + first*C*H*W, to be compared with the candidate's output from element
// first * (elements per image); the comparison's sums of the slices merge into the figures one
// comparison of the whole output gives. The worker slices when whole answers, one per input
// draw, do not fit device memory (worker/verify_memory.hpp).
#include <cstdint>
#include <functional>
#include <vector>

#include "kernel_templates/ref_bounds.cuh"
#include "spec/problem.hpp"

namespace fusetune::reference {

struct ImageSlice {
  int64_t first = 0;   // the slice's first image
  int64_t images = 0;  // how many
  friend bool operator==(const ImageSlice&, const ImageSlice&) = default;
};

// Whether the reference of a problem may be computed image by image: the chain form of conv2d,
// whose only reduction is over channels. Not the v2 forms (batch statistics, reductions over
// space or everything mix images).
[[nodiscard]] bool sliceable_by_images(const spec::Problem& p);

// The problem restricted to `images` images (n = images): the slice's reference problem.
[[nodiscard]] spec::Problem slice_problem(const spec::Problem& p, int64_t images);

// [0, n) in slices of `per_slice` images, in order, the last one shorter when per_slice does
// not divide n. Requires 1 <= per_slice; per_slice > n gives one slice of n.
[[nodiscard]] std::vector<ImageSlice> image_slices(int64_t n, int64_t per_slice);

// The largest s in [1, n] with bytes(s) <= budget, bytes non-decreasing in s; 0 when even one
// image does not fit. Binary search: bytes() may be GpuReference::answer_bytes, rounded to pages.
[[nodiscard]] int64_t most_images_within(int64_t n, double budget, const std::function<double(int64_t)>& bytes);

// Folds the comparison sums of one slice (its first_bad relative to the slice) into `total`,
// the slice starting at element `first_element` of the whole output: maxima by max, counts and
// L2 sums added, first_bad the smallest whole-output index. finish_compare(total, ...) then gives
// the whole comparison's figures (the L2 sums up to the order of additions).
void merge_slice(ft_compare_acc& total, const ft_compare_acc& slice, uint64_t first_element);

}  // namespace fusetune::reference
