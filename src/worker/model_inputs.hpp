#pragma once
// Version-2 inputs on the host, before they go to the device: which of a draw's tensors
// (reference::ModelData, PyTorch's row-major order) each input buffer of a v2 plan binds to, and
// whether the float64 CPU reference (reference::model_reference_with_bounds) is cheap enough to
// verify against. Pure and GPU-free (tests/model_inputs_test.cpp); InputDraws is to upload each
// tensor once per draw and bind by this (docs/architecture.md, version-2 section, item 2).
#include <optional>
#include <span>
#include <string>

#include "codegen/variant.hpp"
#include "reference/model_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::worker {

// The floats buffer `b` binds to in `data`: input -> the main operator's input, weights ->
// its weight, bias -> its bias, param/extra -> params/inputs[b.index]. Throws Error for a
// scratch or chain-form buffer (filters, channels), an index out of range, or a size that is
// not the buffer's: a plan and a draw of different problems.
[[nodiscard]] std::span<const float> model_buffer_floats(const reference::ModelData& data, const codegen::Buffer& b);

// The most multiply-adds of the main operator the CPU reference is asked to do per draw: in
// float64 with the TF32 bounds beside each sum it does some 10^8 per second and core, so this is
// seconds on a worker's cores. Larger problems wait for the GPU reference.
inline constexpr double kMaxCpuReferenceMacs = 2e9;

// Why the CPU reference is not used for `problem` (its main operator's multiply-adds over
// kMaxCpuReferenceMacs, said with both numbers), or nullopt when it is.
[[nodiscard]] std::optional<std::string> why_no_cpu_reference(const spec::Problem& problem);

}  // namespace fusetune::worker
