#pragma once
// The buffers a plan names (codegen/variant.hpp), each with its size and layout derived from
// the problem: what the .cu's host function takes as parameters and documents, and what the
// PyTorch module allocates.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

struct BufferInfo {
  std::string name;
  std::string what;    // "the problem's input", "conv output", ...
  std::string layout;  // NCHW | NHWC | KCRS | KRSC | per-channel
  std::string dims;    // "(N, C, H, W) = (128, 64, 128, 128)"
  int64_t floats = 0;
  bool written = false;  // some step writes it (float*); otherwise read only (const float*)
};

// Every buffer the plan names, in order of first use: a kernel step's arguments in order; a
// conv step's input, filters (conv_filters), bias (chan, when the conv adds it) and output.
// Throws Error (exit 1) for a buffer name this exporter does not know: an exporter older than
// the plan must fail loudly rather than size a buffer wrongly.
[[nodiscard]] std::vector<BufferInfo> plan_buffers(const spec::Problem& problem, const codegen::Variant& variant);

// The filters a conv step reads: cuDNN's NHWC convolution takes KRSC filters (w_krsc), made
// by the plan's transform step; an NCHW one takes PyTorch's KCRS weights (w).
[[nodiscard]] std::string conv_filters(const codegen::Step& step);

// The buffers a step reads and writes, in the order plan_buffers counts them.
[[nodiscard]] std::vector<std::string> step_buffers(const codegen::Step& step);

// "nchw" -> "NCHW"; the layout of the conv output (y, tmp*) and of the plan's output.
[[nodiscard]] std::string layout_name(spec::Layout layout);

}  // namespace fusetune::exporter
