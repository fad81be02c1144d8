#include "gpu/nvrtc_check.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::gpu::detail {

void throw_nvrtc_error(nvrtcResult result, const char* call, const char* file, int line) {
  throw Error(ExitCode::failure,
              fmt::format("{}:{}: {} failed: {}", file, line, call, nvrtcGetErrorString(result)));
}

}  // namespace fusetune::gpu::detail
