// Constraints and derived values shared by the design spaces.
#include "codegen/designs.hpp"

namespace fusetune::codegen {

void require_block_fits(ParamSpace& space, const gpu::DeviceLimits& dev,
                        std::function<int64_t(const ParamValues&)> threads,
                        std::function<int64_t(const ParamValues&)> smem_bytes) {
  const int64_t max_block = dev.max_threads_per_block;
  const int64_t max_sm = dev.max_threads_per_sm;
  const int64_t warp = dev.warp_size;
  const int64_t smem_block = dev.smem_per_block;
  const int64_t smem_sm = dev.smem_per_sm;
  space.require("threads per block must not exceed the device's " + std::to_string(max_block),
                [=](const ParamValues& v) { return threads(v) <= max_block; });
  space.require("threads per block must not exceed the device's " + std::to_string(max_sm) + " per SM",
                [=](const ParamValues& v) { return threads(v) <= max_sm; });
  space.require("threads per block must be a whole number of " + std::to_string(warp) + "-thread warps",
                [=](const ParamValues& v) { return threads(v) % warp == 0; });
  space.require("static shared memory must fit the device's " + std::to_string(smem_block) + " bytes per block",
                [=](const ParamValues& v) { return smem_bytes(v) <= smem_block; });
  space.require("shared memory must fit the device's " + std::to_string(smem_sm) + " bytes per SM",
                [=](const ParamValues& v) { return smem_bytes(v) <= smem_sm; });
}

int64_t stage_chan(const Shape& s) {
  const int64_t bytes = 4 * s.chan_floats();
  return bytes > 0 && bytes <= kStageChanBytes ? 1 : 0;
}

int64_t staged_chan_bytes(const Shape& s) { return stage_chan(s) ? 4 * s.chan_floats() : 0; }

KernelDesign pointwise_design(const Shape& s, const gpu::DeviceLimits& dev, int64_t layout) {
  const bool nhwc = layout == kLayoutNhwc;
  KernelDesign d{nhwc ? "epilogue.nhwc" : "epilogue.nchw", "epilogue_pointwise.cu", "ft_epilogue_pointwise", {}};
  ParamSpace& sp = d.space;
  sp.param("layout", "", {layout})
      .param("block", "b", {128, 256, 512, 1024})
      .param("vec", "v", {1, 2, 4})
      .param("ept", "e", {1, 2, 4, 8})
      .param("in_place", "", {1});
  const int64_t extent = nhwc ? s.k : s.pq;
  sp.require(nhwc ? "vec must divide K (a vector covers channels of one pixel, aligned)"
                  : "vec must divide P*Q (a vector stays inside one channel and aligned)",
             [=](const ParamValues& v) { return extent % v.at("vec") == 0; });
  require_block_fits(
      sp, dev, [](const ParamValues& v) { return v.at("block"); }, [](const ParamValues&) { return int64_t(0); });
  const int64_t total = s.conv_out_elems();
  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(ceil_div(total, v.at("block") * v.at("vec") * v.at("ept"))), 1, 1};
    l.block = {uint32_t(v.at("block")), 1, 1};
    return l;
  };
  return d;
}

}  // namespace fusetune::codegen
