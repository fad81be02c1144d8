#pragma once
// The generated kernel designs and their search spaces, one space_*.cpp per candidate:
//   space_epilogue_nchw.cpp   epilogue after cuDNN's NCHW conv (pointwise, reducing)
//   space_epilogue_nhwc.cpp   epilogue after cuDNN's NHWC conv (pointwise to NCHW or NHWC, reducing)
//   space_unfused.cpp         the op-by-op baseline (one fixed configuration)
// A design is a template, the kernel it defines, and the ParamSpace of its parameters
// (fixed parameters included, with an empty abbrev), constraints and launch shape.
#include <cstdint>
#include <functional>
#include <string>

#include "codegen/param_space.hpp"
#include "codegen/shape.hpp"
#include "gpu/device_limits.hpp"

namespace fusetune::codegen {

struct KernelDesign {
  std::string prefix;         // variant-name prefix, e.g. "epilogue.nchw"
  std::string template_file;  // e.g. "epilogue_pointwise.cu"
  std::string kernel_name;    // e.g. "ft_epilogue_pointwise"
  ParamSpace space;
};

// Values of the `layout` parameter: which layout the conv writes y in.
inline constexpr int64_t kLayoutNchw = 0;
inline constexpr int64_t kLayoutNhwc = 1;

// Per-channel vectors are staged in shared memory when they fit in this many bytes; larger
// ones are read through the read-only cache instead, to keep occupancy.
inline constexpr int64_t kStageChanBytes = 8 * 1024;

// y NCHW -> out NCHW (in place): epilogue_pointwise.cu with layout 0.
[[nodiscard]] KernelDesign pointwise_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NCHW -> out (N, 1, P, Q): epilogue_reduce.cu.
[[nodiscard]] KernelDesign reduce_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);

// epilogue_pointwise.cu in either layout: the two designs above and below differ only in the
// name prefix and the extent a vector must divide (P*Q for NCHW, K for NHWC).
[[nodiscard]] KernelDesign pointwise_design(const Shape& s, const gpu::DeviceLimits& dev, int64_t layout);

// y NHWC -> out NHWC (in place): epilogue_pointwise.cu with layout 1.
[[nodiscard]] KernelDesign pointwise_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NHWC -> out NCHW, transpose fused: epilogue_pointwise_nhwc.cu.
[[nodiscard]] KernelDesign pointwise_nhwc_to_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NHWC -> out (N, 1, P, Q): epilogue_reduce_nhwc.cu.
[[nodiscard]] KernelDesign reduce_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev);

// The unfused baseline's fixed configuration (layout = the conv's layout).
[[nodiscard]] KernelDesign unfused_design(const Shape& s, int64_t layout);
// Elements per thread of an unfused elementwise kernel over `elems` elements: 4 when it
// divides them (16-byte accesses, like PyTorch's vectorized kernels), else 1.
[[nodiscard]] int64_t unfused_vec(int64_t elems);

// Constraints every design shares: the block fits the device (threads per block and per SM,
// a whole number of warps, static shared memory per block and per SM).
void require_block_fits(ParamSpace& space, const gpu::DeviceLimits& dev,
                        std::function<int64_t(const ParamValues&)> threads,
                        std::function<int64_t(const ParamValues&)> smem_bytes);

// Whether the per-channel vectors are staged in shared memory (0/1), and its bytes then.
[[nodiscard]] int64_t stage_chan(const Shape& s);
[[nodiscard]] int64_t staged_chan_bytes(const Shape& s);

[[nodiscard]] inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace fusetune::codegen
