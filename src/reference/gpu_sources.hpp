#pragma once
// NVRTC sources of the GPU reference kernels (kernel_templates/ref_*.cu) with a problem's
// shape rendered as #defines, and the launch shape that goes with them. GPU-free, so the
// sources are built and compiled in tests on machines without a GPU.
#include <cstdint>
#include <string>

#include "common/math_mode.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The direct convolution's work split (see ref_conv.cu): a block covers `threads` output
// pixels of one image and `channels_per_thread` output channels; `taps_per_stage` filter
// taps go through shared memory at a time. With the bounds a thread keeps three accumulators per
// channel (y, A, B) in registers (about 124 with 16 channels; the render test checks for spills).
struct RefConvLaunch {
  int threads = 128;
  int channels_per_thread = 16;
  int taps_per_stage = 64;
  uint32_t grid_x = 1;  // N * ceil(P*Q / threads)
  uint32_t grid_y = 1;  // ceil(K / channels_per_thread)
  bool strict = false;  // fp32: V0 is the fp32 rule's dot-product variance (FT_REF_STRICT)
};

// Throws InputError when the problem is malformed (check_problem) or exceeds what the
// kernel indexes with 32-bit offsets (one padded input image of 2^31 elements or more) or
// its grid (more than 2^31-1 pixel tiles, 65535 channel tiles).
[[nodiscard]] RefConvLaunch ref_conv_launch(const spec::Problem& p, MathMode math);

// ref_conv.cu with FT_N..FT_DIL_W, the RefConvLaunch tile sizes, and FT_REF_STRICT
// defined in front, and kernel_templates/ref_bounds.cuh (E0, V0) before it.
[[nodiscard]] std::string render_reference_conv_source(const spec::Problem& p, MathMode math);

// ref_compare.cu with ref_bounds.cuh in front: the comparison under either rule (the problem
// and the math mode arrive as kernel arguments).
[[nodiscard]] std::string render_reference_compare_source();

// A ref_*.cu template's text, embedded at build time ("ref_fill.cu", "ref_compare.cu", ...);
// std::out_of_range (templates::template_source) when the binary lacks it.
[[nodiscard]] std::string reference_template(const std::string& file_name);

}  // namespace fusetune::reference
