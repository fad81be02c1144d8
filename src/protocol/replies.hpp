#pragma once
// The worker protocol's device request and the replies any request may get instead of its own,
// as types (protocol.hpp has the others). A reply line is read once, by reply_kind(), then
// converted by the function of its kind.
//   error  the request failed and the worker goes on: {"error": text, "exit_code": n}
//   fault  the CUDA context is lost: {"status": "faulted", "reason": text}; the worker exits
//          after sending it and the tuner starts a fresh one
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/error.hpp"
#include "gpu/device_limits.hpp"

namespace fusetune::protocol {

struct DeviceRequest {
  int device = 0;  // ordinal
};

struct DeviceReply {
  gpu::DeviceLimits limits;
  std::string name;        // "NVIDIA H200"
  int64_t total_mem = 0;   // bytes
  int driver_version = 0;  // CUDA version the driver supports, e.g. 13000
  std::string driver;      // "13.0"
  std::string pci_bus_id;  // tells identical GPUs of one host apart
  int count = 0;           // GPUs the driver lists
};

struct ErrorReply {
  std::string error;
  ExitCode exit_code = ExitCode::failure;
};

struct FaultReply {
  std::string reason;
};

enum class ReplyKind { answer, error, fault };

[[nodiscard]] nlohmann::json to_json(const DeviceRequest& r);
[[nodiscard]] nlohmann::json to_json(const DeviceReply& r);
[[nodiscard]] nlohmann::json to_json(const ErrorReply& r);
[[nodiscard]] nlohmann::json to_json(const FaultReply& r);
[[nodiscard]] DeviceRequest device_request_from_json(const nlohmann::json& j);
[[nodiscard]] DeviceReply device_reply_from_json(const nlohmann::json& j);
// Call only on a reply of that kind.
[[nodiscard]] ErrorReply error_reply_from_json(const nlohmann::json& j);
[[nodiscard]] FaultReply fault_reply_from_json(const nlohmann::json& j);

// What a reply line is: an error, a fault, or the answer its request asked for.
[[nodiscard]] ReplyKind reply_kind(const nlohmann::json& reply);

}  // namespace fusetune::protocol
