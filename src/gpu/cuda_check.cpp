#include "gpu/cuda_check.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "gpu/driver_api.hpp"

namespace fusetune::gpu {

bool CudaError::context_lost() const noexcept { return is_sticky_error(result_); }

bool is_sticky_error(CUresult result) noexcept {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

std::string cu_result_text(CUresult result) noexcept {
  try {
    const DriverApi* api = driver_if_loaded();
    const char* name = nullptr;
    const char* text = nullptr;
    if (api != nullptr && api->cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) {
      if (api->cuGetErrorString(result, &text) == CUDA_SUCCESS && text != nullptr) {
        return fmt::format("{}: {}", name, text);
      }
      return name;
    }
    return fmt::format("CUresult {}", static_cast<int>(result));
  } catch (...) {
    return "CUresult (out of memory formatting it)";
  }
}

namespace detail {

void throw_cu_error(CUresult result, const char* call, const char* file, int line) {
  throw CudaError(result, fmt::format("{}:{}: {} failed: {}", file, line, call, cu_result_text(result)));
}

void report_cu_error(CUresult result, const char* call, const char* file, int line) noexcept {
  // stdio, not iostream or fmt: nothing here may throw.
  const std::string text = cu_result_text(result);
  std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: %s\n", file, line, call, text.c_str());
}

}  // namespace detail
}  // namespace fusetune::gpu
