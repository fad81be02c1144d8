#include "gpu/cudnn_check.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <exception>

#include "common/error.hpp"

namespace fusetune::gpu::detail {
namespace {

// Reading the message also clears it (cuDNN's behaviour), so each message is reported once.
std::string take_last_error_string() {
#if CUDNN_MAJOR >= 9
  std::array<char, 1024> buf{};
  cudnnGetLastErrorString(buf.data(), buf.size());
  buf.back() = '\0';
  return std::string(buf.data());
#else
  return {};
#endif
}

}  // namespace

std::string cudnn_error_message(cudnnStatus_t status, const char* call, const char* file, int line) {
  std::string msg = fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudnnGetErrorString(status),
                                static_cast<int>(status));
  if (const std::string detail = take_last_error_string(); !detail.empty()) {
    msg += ": " + detail;
  }
  return msg;
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  // cuDNN 9 numbers its status families by thousands: 3000-3999 are NOT_SUPPORTED and its sub-codes.
  if (int(status) / 1000 == int(CUDNN_STATUS_NOT_SUPPORTED) / 1000)
    throw CudnnNotSupported(cudnn_error_message(status, call, file, line));
  throw Error(ExitCode::failure, cudnn_error_message(status, call, file, line));
}

void report_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) noexcept {
  // Formatting allocates; if even that fails, fall back to the bare facts.
  try {
    const std::string msg = cudnn_error_message(status, call, file, line);
    std::fprintf(stderr, "fusetune: warning: %s\n", msg.c_str());
  } catch (const std::exception&) {
    std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: cuDNN status %d\n", file, line, call,
                 static_cast<int>(status));
  }
}

void discard_cudnn_last_error() noexcept {
  try {
    (void)take_last_error_string();
  } catch (const std::exception&) {
  }
}

}  // namespace fusetune::gpu::detail
