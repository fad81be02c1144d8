#include "cli/version.hpp"

#include <fmt/format.h>

#include "gpu/compiler.hpp"
#include "gpu/cudnn_version.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"

namespace fusetune::cli {

std::string version_text() {
  std::string driver;
  std::string why;
  if (!gpu::driver_available(&why)) {
    // why: "no NVIDIA driver found (<the loader's reason>); this command needs a GPU"
    const size_t open = why.find('('), close = why.rfind(')');
    driver = open != std::string::npos && close > open ? "driver: none (" + why.substr(open + 1, close - open - 1) + ")"
                                                       : "driver: none";
  } else {
    try {
      driver = "driver " + gpu::driver_version_string();
    } catch (const std::exception& e) {
      driver = fmt::format("driver: unreadable ({})", e.what());
    }
  }
  return fmt::format("fusetune {}\nNVRTC {}, cuDNN {} (built against {}, cudnn-frontend {}), {}", FUSETUNE_VERSION,
                     gpu::nvrtc_version(), gpu::cudnn_version_string(),
                     gpu::cudnn_version_string(gpu::cudnn_header_version()), FUSETUNE_CUDNN_FRONTEND_VERSION, driver);
}

}  // namespace fusetune::cli
