#include "protocol/limits_json.hpp"

namespace fusetune::protocol {

#define FT_LIMIT_FIELDS(X)                                                                              \
  X(name) X(cc_major) X(cc_minor) X(sm_count) X(warp_size) X(max_threads_per_block) X(max_threads_per_sm) \
  X(max_blocks_per_sm) X(regs_per_block) X(regs_per_sm) X(smem_per_block) X(smem_per_block_optin)        \
  X(smem_per_sm) X(l2_bytes) X(global_mem_bytes)

nlohmann::json limits_to_json(const gpu::DeviceLimits& l) {
  nlohmann::json j;
#define FT_TO(f) j[#f] = l.f;
  FT_LIMIT_FIELDS(FT_TO)
#undef FT_TO
  return j;
}

gpu::DeviceLimits limits_from_json(const nlohmann::json& j) {
  gpu::DeviceLimits l;
#define FT_FROM(f) l.f = j.value(#f, l.f);
  FT_LIMIT_FIELDS(FT_FROM)
#undef FT_FROM
  return l;
}

}  // namespace fusetune::protocol
