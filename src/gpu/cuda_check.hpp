#pragma once
// One checking macro for driver API calls (STYLE.md 4): FT_CU_CALL throws CudaError (a
// fusetune::Error, exit code 1) naming file:line, the CUresult's name and text and the
// call's own text; FT_CU_CALL_NOEXCEPT is its twin for destructors: it reports on stderr
// and never throws.
//
//   const auto& cu = driver();
//   FT_CU_CALL(cu.cuMemAlloc(&ptr, bytes));
#include <cuda.h>

#include <string>

#include "common/error.hpp"
#include "common/source_file.hpp"

namespace fusetune::gpu {

class CudaError : public Error {
 public:
  CudaError(CUresult result, const std::string& what) : Error(ExitCode::failure, what), result_(result) {}
  [[nodiscard]] CUresult result() const noexcept { return result_; }
  // A kernel fault (illegal address, misaligned access, trap, ...) leaves the context
  // unusable: every later call fails. The worker process must exit and be replaced.
  [[nodiscard]] bool context_lost() const noexcept;

 private:
  CUresult result_;
};

// True for the "sticky" errors after which the CUDA context cannot be used again.
bool is_sticky_error(CUresult result) noexcept;

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered", or "CUresult N"
// when the driver is not loaded.
std::string cu_result_text(CUresult result) noexcept;

namespace detail {
[[noreturn]] void throw_cu_error(CUresult result, const char* call, const char* file, int line);
void report_cu_error(CUresult result, const char* call, const char* file, int line) noexcept;
}  // namespace detail

}  // namespace fusetune::gpu


#define FT_CU_CALL(expr)                                                                  \
  do {                                                                                    \
    const CUresult ft_cu_result_ = (expr);                                                \
    if (ft_cu_result_ != CUDA_SUCCESS) {                                                  \
      ::fusetune::gpu::detail::throw_cu_error(ft_cu_result_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                     \
  } while (0)

#define FT_CU_CALL_NOEXCEPT(expr)                                                          \
  do {                                                                                     \
    const CUresult ft_cu_result_ = (expr);                                                 \
    if (ft_cu_result_ != CUDA_SUCCESS) {                                                   \
      ::fusetune::gpu::detail::report_cu_error(ft_cu_result_, #expr, FUSETUNE_FILE, __LINE__); \
    }                                                                                      \
  } while (0)
