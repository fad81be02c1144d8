#pragma once
// Version-2 inputs on the host, before they go to the device: the verification draws
// (reference::draw_model_data, seeded), which of a draw's tensors (reference::ModelData,
// PyTorch's row-major order) each input buffer of a v2 plan binds to, and whether the float64
// CPU reference (reference::model_reference_with_bounds) is cheap enough to verify against.
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
// tensor U(-1, 1) (signed, never 0), with the input made |x| (U(0, 1), as KernelBench's torch.rand
// draws it) on the draws reference::verification_draw gives a unit x range (0, 2, ...): the same
// alternation as the conv2d draws, so a kernel right only for positive inputs and one right only
// for signed ones both show. Weights, biases, parameters and extra inputs stay signed.
[[nodiscard]] reference::ModelData model_verification_draw(const spec::Problem& problem, uint64_t seed, int d);

// The floats buffer `b` binds to in `data`: input -> the main operator's input, weights ->
// its weight, bias -> its bias, param/extra -> params/inputs[b.index]. Throws Error for a
// scratch or chain-form buffer (filters, channels), an index out of range, or a size that is
// not the buffer's: a plan and a draw of different problems.
[[nodiscard]] std::span<const float> model_buffer_floats(const reference::ModelData& data, const codegen::Buffer& b);

// The most multiply-adds of the main operator the CPU reference is asked to do per draw: in
// float64 with the TF32 bounds beside each sum it does some 10^8 per second and core, so this is
// seconds on a worker's cores. Larger problems wait for the GPU reference.
inline constexpr double kMaxCpuReferenceMacs = 2e9;
// The most values of the main output or the problem's output it holds per draw: each value is
// carried with its bound and variance (24 bytes) through every stage, so 2^26 of them are a few
// GB of host memory. A GEMM with a short K (a 32768 x 32768 output from K = 1) has few
// multiply-adds per output and would pass the first limit alone.
inline constexpr int64_t kMaxCpuReferenceValues = int64_t(1) << 26;

// Why the CPU reference is not used for `problem` (its main operator's multiply-adds over
// kMaxCpuReferenceMacs, or its outputs over kMaxCpuReferenceValues, said with both numbers), or
// nullopt when it is.
[[nodiscard]] std::optional<std::string> why_no_cpu_reference(const spec::Problem& problem);

}  // namespace fusetune::worker
