#pragma once
// The CUDA driver API, loaded at run time with dlopen so that fusetune starts (and its
// GPU-free commands work) on machines without an NVIDIA driver. libcuda is never linked;
// <cuda.h> is used for its types, enums and prototypes only.
//
// Members carry the C API's names. cuda.h #defines several of them to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...), and the
// same macros rename the members, so `api.cuMemAlloc(&p, n)` reaches the exported
// cuMemAlloc_v2 and its prototype, exactly as a linked call would.
//
// Fork: driver() calls cuInit. A process that has called it must not use CUDA in a plain
// fork()ed child; start GPU workers with fork+exec, or fork before the first driver() call.
#include <cuda.h>

#include <string>

// X-macro list of every driver function fusetune uses; add new ones here only.
#define FUSETUNE_DRIVER_FUNCTIONS(X)                                                       \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                   \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)           \
  X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId)                                              \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)             \
  X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuCtxGetLimit) X(cuCtxSetLimit)                \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                            \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)                           \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                          \
  X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)                                              \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemsetD32)            \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)                          \
  X(cuMemsetD8Async) X(cuMemsetD32Async)                                                  \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery)            \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)               \
  X(cuEventQuery) X(cuEventElapsedTime)

namespace fusetune::gpu {

struct DriverApi {
#define FUSETUNE_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  FUSETUNE_DRIVER_FUNCTIONS(FUSETUNE_DRIVER_MEMBER)
#undef FUSETUNE_DRIVER_MEMBER
};

// Loads libcuda.so.1 and calls cuInit(0), once per process (thread-safe). Throws
// NoGpuError (exit code 3) with one line saying why when there is no driver, the driver
// lacks a function, cuInit fails or no device is visible. Later calls throw the same.
const DriverApi& driver();

// Non-throwing probe: true when driver() would succeed; otherwise `why` (if given) gets
// the same one-line reason driver() would throw. Initializes the driver (see Fork above).
bool driver_available(std::string* why = nullptr) noexcept;

// The loaded API, or nullptr when loading failed or has not happened yet. For error paths
// that must not throw or trigger loading (naming a CUresult in a destructor).
const DriverApi* driver_if_loaded() noexcept;

}  // namespace fusetune::gpu
