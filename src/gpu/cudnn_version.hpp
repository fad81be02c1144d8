#pragma once
// The cuDNN library version, for the environment fingerprint: results measured with one cuDNN
// are stale under another. Needs no GPU (cudnnGetVersion only reads the loaded library).
#include <string>

namespace fusetune::gpu {

// The loaded library's version, e.g. 91900 for 9.19.0 (may differ from the headers we built with).
[[nodiscard]] int cudnn_version();
// The version the headers declare at build time (CUDNN_VERSION).
[[nodiscard]] int cudnn_header_version();
// "9.19.0" for the loaded library.
[[nodiscard]] std::string cudnn_version_string();
// "9.19.0" for 91900; cuDNN 8's encoding (8907 = 8.9.7) is also understood.
[[nodiscard]] std::string cudnn_version_string(int version);

}  // namespace fusetune::gpu
