#pragma once
// `fusetune --version`: fusetune's version and the versions of what it runs on, as found on this
// machine (a bug report needs them all; a result's environment fingerprint is made of them).
#include <string>

namespace fusetune::cli {

// "fusetune 0.1.0\nNVRTC 13.0, cuDNN 9.19.0 (built against 9.19.0, frontend 1.32.0), driver 13.0"
// ("driver: none (<why>)" without one). Never throws.
[[nodiscard]] std::string version_text();

}  // namespace fusetune::cli
