#include "gpu/cublaslt_check.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "common/error.hpp"

namespace fusetune::gpu {

std::string cublas_status_text(cublasStatus_t status) {
  // Both functions are host-only table look-ups: they work without a GPU or a handle.
  const char* name = cublasLtGetStatusName(status);
  const char* text = cublasLtGetStatusString(status);
  return fmt::format("{} ({}): {}", name != nullptr ? name : "CUBLAS_STATUS_?", static_cast<int>(status),
                     text != nullptr ? text : "no description");
}

namespace detail {

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error(ExitCode::failure, fmt::format("{}:{}: {} failed: {}", file, line, call, cublas_status_text(status)));
}

void report_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  // Formatting allocates; if even that fails, fall back to the bare facts.
  try {
    const std::string text = cublas_status_text(status);
    std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: %s\n", file, line, call, text.c_str());
  } catch (const std::exception&) {
    std::fprintf(stderr, "fusetune: warning: %s:%d: %s failed: cuBLAS status %d\n", file, line, call,
                 static_cast<int>(status));
  }
}

}  // namespace detail
}  // namespace fusetune::gpu
