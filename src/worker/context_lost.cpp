#include "worker/context_lost.hpp"

#include <fmt/format.h>

#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::worker {

void sync_or_lose(const std::string& what) {
  const CUresult r = gpu::driver().cuCtxSynchronize();
  if (r == CUDA_SUCCESS) return;
  throw ContextLost{fmt::format("{}: {}", what, gpu::cu_result_text(r))};
}

}  // namespace fusetune::worker
