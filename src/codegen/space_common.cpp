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

}  // namespace fusetune::codegen
