#pragma once
// One checking macro for cuBLASLt calls (STYLE.md 4). A failing call throws fusetune::Error
// (exit code 1) carrying file:line, the call's own text, and cuBLASLt's status name and
// description ("CUBLAS_STATUS_NOT_SUPPORTED (15): ..."). FT_CUBLAS_CALL_NOEXCEPT is the twin for
// destructors: it reports on stderr and never throws.
#include <cublasLt.h>

#include <string>

#include "common/source_file.hpp"

namespace fusetune::gpu {

// "CUBLAS_STATUS_X (code): cuBLAS's description of it".
[[nodiscard]] std::string cublas_status_text(cublasStatus_t status);

namespace detail {
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
void report_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace fusetune::gpu

#define FT_CUBLAS_CALL(expr)                                                                     \
  do {                                                                                           \
    const cublasStatus_t ft_cublas_status_ = (expr);                                             \
    if (ft_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                            \
      ::fusetune::gpu::detail::throw_cublas_error(ft_cublas_status_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                            \
  } while (0)

#define FT_CUBLAS_CALL_NOEXCEPT(expr)                                                             \
  do {                                                                                            \
    const cublasStatus_t ft_cublas_status_ = (expr);                                              \
    if (ft_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                             \
      ::fusetune::gpu::detail::report_cublas_error(ft_cublas_status_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                             \
  } while (0)
