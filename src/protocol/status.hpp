#pragma once
// A variant's outcome. A failure is a recorded result, not an exception that ends the run.
#include <optional>
#include <string_view>

namespace fusetune::protocol {

enum class Status {
  ok,                      // compiled (and, when run, verified)
  compile_failed,          // NVRTC rejected the source; the log is kept
  device_limits_exceeded,  // registers/shared memory/threads don't fit the device
  launch_failed,           // the driver refused the launch
  wrong_result,            // ran, but verification failed
  faulted,                 // illegal address or other sticky error: the worker was replaced
  timeout,                 // did not finish in time: the worker was killed and replaced
  not_supported,           // the backend refused the configuration (e.g. a cuDNN engine)
};

std::string_view status_name(Status s);
std::optional<Status> status_from_name(std::string_view name);
// Whether a stored status (a database row's text) is `s`: every reader of stored results asks
// this rather than comparing with a spelling of its own.
[[nodiscard]] bool is_status(std::string_view stored, Status s);

}  // namespace fusetune::protocol
