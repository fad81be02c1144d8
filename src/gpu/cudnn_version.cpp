#include "gpu/cudnn_version.hpp"

#include <cudnn.h>
#include <fmt/format.h>

namespace fusetune::gpu {

int cudnn_version() { return static_cast<int>(cudnnGetVersion()); }

int cudnn_header_version() { return CUDNN_VERSION; }

std::string cudnn_version_string() { return cudnn_version_string(cudnn_version()); }

std::string cudnn_version_string(int version) {
  // cuDNN 9 encodes major*10000 + minor*100 + patch; cuDNN <= 8 used major*1000 + minor*100 + patch.
  if (version < 10000) {
    return fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
}

}  // namespace fusetune::gpu
