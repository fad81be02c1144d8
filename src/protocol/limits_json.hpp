#pragma once
// DeviceLimits <-> JSON, so the tuner can build search spaces from the limits the worker read.
#include <nlohmann/json.hpp>

#include "gpu/device_limits.hpp"

namespace fusetune::protocol {
nlohmann::json limits_to_json(const gpu::DeviceLimits& l);
gpu::DeviceLimits limits_from_json(const nlohmann::json& j);
}  // namespace fusetune::protocol
