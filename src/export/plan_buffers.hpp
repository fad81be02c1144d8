#pragma once
// The buffers a plan uses, from the variant's own table (codegen/variant.hpp), in the order a
// reader meets them: what the .cu's host function takes as parameters and documents, and what
// the PyTorch module allocates.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::exporter {

struct BufferInfo {
  std::string name;
  std::string what;    // "the problem's input", "conv output", ...
  std::string layout;  // NCHW | NHWC | KCRS | KRSC | vector
  std::string dims;    // "(N, C, H, W) = (128, 64, 128, 128)"
  int64_t floats = 0;
  bool written = false;  // some step writes it (float*); otherwise read only (const float*)
};

// Every buffer the plan names, in order of first use: a kernel step's arguments in order; a
// conv step's input, filters, bias (when the conv adds it) and output.
[[nodiscard]] std::vector<BufferInfo> plan_buffers(const codegen::Variant& variant);

// The buffers a step reads and writes, in the order plan_buffers counts them.
[[nodiscard]] std::vector<codegen::BufferRef> step_buffers(const codegen::Step& step);

// The InputError for a version-2 problem or plan (GEMM / N-d conv steps, stage kernels with
// by-value arguments), which no export format writes yet (docs/architecture.md, "Version-2
// problems", item 4). winner_variant() throws it before any export starts; the exports'
// switches over StepKind throw it for those kinds too.
[[noreturn]] void refuse_model_plan(const std::string& variant_name);

// "nchw" -> "NCHW": the layout of the plan's output.
[[nodiscard]] std::string layout_name(spec::Layout layout);

}  // namespace fusetune::exporter
