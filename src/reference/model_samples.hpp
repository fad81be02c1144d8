#pragma once
// Verification of a version-2 problem on a sample of its images, the arithmetic of it (GPU-free,
// so it is unit-tested). The float64 reference's stages run on the CPU and hold at most
// worker::kMaxReferenceValues values per draw; 30 of KernelBench level 2's mapped problems have
// more (their outputs are 2^27 to 2^30 values, every one a conv over a batch of 16 to 1024). Where
// no stage mixes images -- no batch statistics, no reduction, softmax or layer norm over dim 0,
// no per-image parameter -- the reference of images [first, first + images) is the reference of
// the same problem with n = images on those images' input (and extra inputs' rows), and it equals
// those images' rows of the whole reference: tests/model_samples_test.cpp checks that on small
// shapes. So each draw checks one block of images against the float64 reference (draw 0 the
// first images, draw 1 the last, draw 2 the block holding output element 2^31 when the output
// passes it, else the middle; later draws spread between), and the whole output is searched for
// the sentinel the verification poisoned it with (an unwritten element anywhere fails).
#include <cstdint>
#include <optional>
#include <string>

#include "reference/image_slices.hpp"
#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The larger of the main operator's output and the problem's output, in values: what the float64
// reference's stages hold per draw (worker/model_inputs.hpp limits it).
[[nodiscard]] int64_t largest_output(const spec::Problem& p);

// What an "image" is, the outermost dim of the main output: a conv's n; a batched matmul's
// batch; a linear's (or single-batch matmul's) rows, M. How many there are.
[[nodiscard]] int64_t sample_batch(const spec::Problem& p);

// Why the images of `p` cannot be checked apart (a stage that mixes them, named), or nullopt
// when they can. The chain form of conv2d (a version-1 problem) has its own slicing
// (image_slices.hpp): refused here, as is a transposed single-batch matmul (its rows are
// strided in its input).
[[nodiscard]] std::optional<std::string> why_images_not_independent(const spec::Problem& p);

// The fewest images a sample may have: 2 for a batched matmul (with 1 its output would lose the
// batch dim and the stages' dims would shift), else 1.
[[nodiscard]] int64_t least_sample(const spec::Problem& p);

// The problem on `images` images (n, batch or M = images; at least least_sample(p)), and every
// extra input whose dim 0 is the batch sliced with it. Requires why_images_not_independent(p) ==
// nullopt.
[[nodiscard]] spec::Problem sample_problem(const spec::Problem& p, int64_t images);

// Where images [s.first, ...) start in the main operator's input and weight, in elements (the
// weight moves only for a batched matmul, whose B is per batch).
struct SampleOffsets {
  int64_t input = 0, weight = 0;
};
[[nodiscard]] SampleOffsets sample_offsets(const spec::Problem& p, const ImageSlice& s);

// Images [s.first, s.first + s.images) of draw `data` of `p`: the input's and those extra
// inputs' rows (a batched matmul's weight too); bias and parameters as they are. A draw of
// sample_problem(p, s.images).
[[nodiscard]] ModelData sample_data(const spec::Problem& p, const ModelData& data, const ImageSlice& s);

// The block of `images` images draw d checks, of n (1 <= images <= n): see the header comment.
// out_per_image: output elements per image (for the 2^31 boundary).
[[nodiscard]] ImageSlice sampled_block(int64_t n, int64_t images, int64_t out_per_image, int d);

// How many images a draw checks within `max_values` values of the largest of the main output and
// the output (at least least_sample(p); all when they fit).
[[nodiscard]] int64_t sample_images(const spec::Problem& p, int64_t max_values);

}  // namespace fusetune::reference
