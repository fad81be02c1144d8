#include "protocol/status.hpp"

#include <array>
#include <utility>

namespace fusetune::protocol {

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 8> kNames{{
    {Status::ok, "ok"},
    {Status::compile_failed, "compile_failed"},
    {Status::device_limits_exceeded, "device_limits_exceeded"},
    {Status::launch_failed, "launch_failed"},
    {Status::wrong_result, "wrong_result"},
    {Status::faulted, "faulted"},
    {Status::timeout, "timeout"},
    {Status::not_supported, "not_supported"},
}};
}  // namespace

std::string_view status_name(Status s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "unknown";
}

std::optional<Status> status_from_name(std::string_view name) {
  for (const auto& [status, n] : kNames)
    if (n == name) return status;
  return std::nullopt;
}

bool is_status(std::string_view stored, Status s) { return status_from_name(stored) == s; }

}  // namespace fusetune::protocol
