#pragma once
// A loaded CUBIN (or PTX) image and its kernels, plus the launch call. Needs the owning
// Context current on the calling thread; unload happens in the destructor.
//
//   CompileResult c = compile_cuda(src, "axpy.cu", {.arch = info.limits.arch_flag()});
//   Module m(c.cubin);
//   CUfunction f = m.function("axpy");
//   launch_kernel(f, {blocks, 1, 1}, {256, 1, 1}, 0, stream.get(), y.ptr(), x.ptr(), 2.0f, n);
#include <cuda.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class Module {
 public:
  // `image`: CUBIN bytes from compile_cuda (CompileResult::cubin), or PTX text (JIT-compiled
  // by the driver). A CUBIN for another architecture fails with CUDA_ERROR_NO_BINARY_FOR_GPU.
  explicit Module(std::string_view image);

  [[nodiscard]] CUmodule get() const noexcept { return module_.get(); }
  // The kernel of that (unmangled, extern "C") name; throws CudaError naming it when absent.
  [[nodiscard]] CUfunction function(const std::string& name) const;

 private:
  struct Unload {
    void operator()(CUmodule module) const noexcept;
  };
  UniqueHandle<CUmodule, Unload> module_;  // move-only, unloaded once
};

// What the driver knows about a loaded kernel (cuFuncGetAttribute).
struct FunctionInfo {
  int registers = 0;
  int max_threads_per_block = 0;  // for this kernel given its registers; < 1024 means limited
  int static_smem_bytes = 0;
  int local_bytes = 0;            // per thread (stack + spills)
  int const_bytes = 0;
  int ptx_version = 0;            // e.g. 90
  int binary_version = 0;         // SASS architecture, e.g. 90
};
FunctionInfo function_info(CUfunction f);

// Dynamic shared memory above 48 KiB must be opted into per kernel before launching.
void set_max_dynamic_smem(CUfunction f, int bytes);

// Resident blocks per SM for this block size and dynamic shared memory (occupancy).
int max_active_blocks_per_sm(CUfunction f, int block_threads, size_t dynamic_smem_bytes);

using Dim3 = std::array<uint32_t, 3>;  // same shape as codegen::LaunchConfig's grid/block

// Enqueues f on `stream`. `args[i]` points at the i-th kernel parameter's value; values are
// copied at the call, so they may live on the caller's stack. Launch errors (too many
// threads, too much shared memory) throw CudaError here; faults surface at the next sync.
void launch(CUfunction f, const Dim3& grid, const Dim3& block, uint32_t smem_bytes, CUstream stream,
            void** args);

// Convenience: the kernel's parameters as values. Each must have the kernel parameter's
// exact type and size (pass CUdeviceptr for pointers, float not double, int32_t for int).
template <typename... Args>
void launch_kernel(CUfunction f, const Dim3& grid, const Dim3& block, uint32_t smem_bytes,
                   CUstream stream, Args... args) {
  std::array<void*, sizeof...(Args)> ptrs{static_cast<void*>(&args)...};
  launch(f, grid, block, smem_bytes, stream, ptrs.data());
}

}  // namespace fusetune::gpu
