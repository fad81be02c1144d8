#pragma once
// One checking macro for cuDNN calls (STYLE.md 4). A failing call throws fusetune::Error
// (exit code 1) carrying file:line, the call's own text, cuDNN's status name and, since
// cuDNN 9, cuDNN's own explanation of the failure (cudnnGetLastErrorString), which names
// the offending parameter where the status alone ("BAD_PARAM") does not.
// FT_CUDNN_CALL_NOEXCEPT is the twin for destructors: it reports on stderr and never throws.
#include <cudnn.h>

#include <string>
#include "common/error.hpp"
#include "common/source_file.hpp"

namespace fusetune::gpu {

// cuDNN answered NOT_SUPPORTED (status 3000 and its sub-codes): a limit of the library for this
// configuration, not a fault; the worker records the variant `not_supported` with this reason.
class CudnnNotSupported : public Error {
 public:
  explicit CudnnNotSupported(const std::string& reason) : Error(ExitCode::failure, reason) {}
};

}  // namespace fusetune::gpu

namespace fusetune::gpu::detail {

// "file:line: call failed: CUDNN_STATUS_X (code): cuDNN's message"
[[nodiscard]] std::string cudnn_error_message(cudnnStatus_t status, const char* call, const char* file,
                                              int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);
void report_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) noexcept;

// cuDNN keeps the last error message per thread until it is read. Call this after a failure
// that is deliberately ignored (probing which algorithms apply) so that the message does
// not get attached to a later, unrelated error.
void discard_cudnn_last_error() noexcept;

}  // namespace fusetune::gpu::detail

// Same guard as cuda_check.hpp: errors name "cudnn_conv.cpp", not the build machine's path.

#define FT_CUDNN_CALL(expr)                                                                   \
  do {                                                                                        \
    const cudnnStatus_t ft_cudnn_status_ = (expr);                                            \
    if (ft_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                                           \
      ::fusetune::gpu::detail::throw_cudnn_error(ft_cudnn_status_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                         \
  } while (0)

#define FT_CUDNN_CALL_NOEXCEPT(expr)                                                           \
  do {                                                                                         \
    const cudnnStatus_t ft_cudnn_status_ = (expr);                                             \
    if (ft_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                                            \
      ::fusetune::gpu::detail::report_cudnn_error(ft_cudnn_status_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                          \
  } while (0)
