#pragma once
// One checking macro for NVRTC calls (STYLE.md 4): a failing call throws fusetune::Error
// carrying file:line, NVRTC's error name and the call's own text. A compile error in a
// variant is NOT reported through this: compile_cuda() returns it as a status with the log.
#include <nvrtc.h>
#include "common/source_file.hpp"

namespace fusetune::gpu::detail {

[[noreturn]] void throw_nvrtc_error(nvrtcResult result, const char* call, const char* file, int line);

}  // namespace fusetune::gpu::detail


#define FT_NVRTC_CALL(expr)                                                          \
  do {                                                                               \
    const nvrtcResult ft_nvrtc_result_ = (expr);                                     \
    if (ft_nvrtc_result_ != NVRTC_SUCCESS) {                                         \
      ::fusetune::gpu::detail::throw_nvrtc_error(ft_nvrtc_result_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                \
  } while (0)
