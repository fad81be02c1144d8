#pragma once
// Version-2 inputs on the host, before they go to the device: the verification draws
// (reference::draw_model_data, seeded), which of a draw's tensors (reference::ModelData,
// PyTorch's row-major order) each input buffer of a v2 plan binds to, and whether the float64
// reference (GPU main-operator terms, CPU stages) is cheap enough to verify against.
// Pure and GPU-free (tests/model_inputs_test.cpp); worker/model_draw.cpp uploads each tensor
// once per draw and binds by this.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "codegen/variant.hpp"
#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::worker {

// Verification draw d of a version-2 problem: reference::draw_model_data(problem, seed + d), every
// tensor signed (never 0), with the input made |x| (U(0, 1), as KernelBench's torch.rand draws
// it) on the draws reference::verification_draw gives a unit x range (0, 2, ...): the same
// alternation as the conv2d draws, so a kernel right only for positive inputs and one right only
// for signed ones both show; on draw 2 the weights are made |w| too (reference::Filters::positive,
// as the conv2d draws' filters): a coherent sum, where an error of one sign shows. From draw 1 on,
// half the output channels' biases sit on the epilogue's thresholds (reference::place_model_biases,
// verification_draw's threshold_fraction), as the conv2d draws' do. Parameters and extra inputs
// stay signed.
[[nodiscard]] reference::ModelData model_verification_draw(const spec::Problem& problem, uint64_t seed, int d);

// The floats buffer `b` binds to in `data`: input -> the main operator's input, weights ->
// its weight, bias -> its bias, param/extra -> params/inputs[b.index]. Throws Error for a
// scratch or chain-form buffer (filters, channels), an index out of range, or a size that is
// not the buffer's: a plan and a draw of different problems.
[[nodiscard]] std::span<const float> model_buffer_floats(const reference::ModelData& data, const codegen::Buffer& b);

// The float64 reference of a version-2 problem is the main operator's terms computed on the GPU
// (reference::GpuReference::main_terms, one thread per output in double), then the stages on the
// CPU from them (reference::model_reference_with_terms). Two limits, one per half:
//
// The most multiply-adds of the main operator the GPU reference does per draw: GPU time. Each
// term is five double operations (the product, y, |t| into A, t^2 into B); an H100 does about
// 1.5e13 of those a second, so the GEMM kernel (operands from shared memory) is bounded near
// 3e12 terms/s and the direct conv (operands from L1) is estimated at 5e11: 1e13 is seconds to
// some 20 s per draw. Measured (call 127, H100, bench/reference/main_terms_rate.cpp): a GEMM's
// terms at 3.9e11 multiply-adds/s (1e13: about 26 s a draw); a conv's bound by the 32 bytes an
// output copied to the host, about 1.3 s per 2^26 outputs. A session draws three, and `tune`
// waits 900 s for a worker's setup.
inline constexpr double kMaxReferenceMacs = 1e13;
// The most values of the main output or the problem's output the CPU stages hold per draw: each
// value is carried with its bound and variance (24 bytes) through every stage, and each stage
// makes a new tensor beside its input, with the terms (32 bytes a value) before them. Measured on
// the CI machine (one core) for 2^24 values: a group norm and a max pool 5.7 s and 1.9 GB at the
// peak, the main operator's answer alone 3.3 s. So 2^27 values are about 75 s and 15 GB per draw,
// some 2.5 minutes for a session's two draws, well inside `tune`'s 900 s setup wait. A GEMM with a short K (a 16384 x 16384 output from K = 1) has few
// multiply-adds per output and would pass the first limit alone.
inline constexpr int64_t kMaxReferenceValues = int64_t(1) << 27;

// Past either limit, a problem whose images are independent (reference/model_samples.hpp) is
// checked on a block of images per draw instead: as many as keep the block's largest output
// within kMaxSampleValues (about 19 s of CPU stages per draw) and its multiply-adds within
// kMaxReferenceMacs, and the whole output is searched for unwritten elements.
inline constexpr int64_t kMaxSampleValues = int64_t(1) << 25;

// Why the float64 reference is not made for `problem` (its main operator's multiply-adds over
// kMaxReferenceMacs, or its outputs over kMaxReferenceValues, said with both numbers, and why its
// images cannot be checked apart; or one image alone past the limits), or nullopt when it is.
// GPU memory is checked when the terms are computed (the chunks fit half the free memory, else
// InputError with both numbers).
[[nodiscard]] std::optional<std::string> why_no_model_reference(const spec::Problem& problem);

// Images of a version-2 problem each draw's float64 reference covers: 0 when the whole problem is
// within the limits (whole answers) or is a conv2d chain (sliced by its own rule, if at all), else
// the block size (see kMaxSampleValues). Call it for a problem why_no_model_reference accepts.
[[nodiscard]] int64_t model_sample_images(const spec::Problem& problem);

// The problem the float64 reference is made for: `problem` (a conv2d chain always), or its block
// of model_sample_images(problem) images (reference::sample_problem).
[[nodiscard]] spec::Problem model_reference_problem(const spec::Problem& problem);

}  // namespace fusetune::worker
