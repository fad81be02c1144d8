#pragma once
// The order in which cuDNN's conv options are screened, timed and verified (conv_cache.hpp),
// apart from the GPU so that it is unit-tested. An option's screening time is +infinity when
// cuDNN refused to run it.
#include <cstddef>
#include <optional>
#include <vector>

namespace fusetune::worker {

// Options whose screening time is within `factor` of the fastest, in their own order.
[[nodiscard]] std::vector<size_t> within_factor(const std::vector<double>& screen_ms, double factor);

// The order in which options are verified until one passes: those timed (a median) fastest
// first, then those screened out by their screening time; refused options never.
[[nodiscard]] std::vector<size_t> verification_order(const std::vector<double>& screen_ms,
                                                     const std::vector<std::optional<double>>& median_ms);

}  // namespace fusetune::worker
