#include "protocol/replies.hpp"

#include "protocol/limits_json.hpp"

namespace fusetune::protocol {

nlohmann::json to_json(const DeviceRequest& r) { return {{"cmd", "device"}, {"device", r.device}}; }

nlohmann::json to_json(const DeviceReply& r) {
  return {{"limits", limits_to_json(r.limits)}, {"name", r.name},       {"total_mem", r.total_mem},
          {"driver_version", r.driver_version}, {"driver", r.driver},   {"pci_bus_id", r.pci_bus_id},
          {"count", r.count}};
}

nlohmann::json to_json(const ErrorReply& r) { return {{"error", r.error}, {"exit_code", int(r.exit_code)}}; }

nlohmann::json to_json(const FaultReply& r) { return {{"status", "faulted"}, {"reason", r.reason}}; }

DeviceRequest device_request_from_json(const nlohmann::json& j) { return {j.value("device", 0)}; }

DeviceReply device_reply_from_json(const nlohmann::json& j) {
  DeviceReply r;
  r.limits = limits_from_json(j.at("limits"));
  r.name = j.value("name", "");
  r.total_mem = j.value("total_mem", int64_t{0});
  r.driver_version = j.value("driver_version", 0);
  r.driver = j.value("driver", "");
  r.pci_bus_id = j.value("pci_bus_id", "");
  r.count = j.value("count", 0);
  return r;
}

ErrorReply error_reply_from_json(const nlohmann::json& j) {
  return {j.at("error").get<std::string>(), ExitCode(j.value("exit_code", int(ExitCode::failure)))};
}

FaultReply fault_reply_from_json(const nlohmann::json& j) {
  return {j.value("reason", std::string("the worker lost its context"))};
}

ReplyKind reply_kind(const nlohmann::json& reply) {
  if (reply.contains("error")) return ReplyKind::error;
  // A run reply has a "status" too (its variant's, which may be "faulted"), and always more keys:
  // the fault reply is exactly {"status": "faulted", "reason"}.
  if (reply.is_object() && reply.size() == 2 && reply.value("status", "") == "faulted" && reply.contains("reason"))
    return ReplyKind::fault;
  return ReplyKind::answer;
}

}  // namespace fusetune::protocol
