#pragma once
// A float tensor copied from one memory layout to another on the GPU by cuDNN
// (cudnnTransformTensor): the worker's channels-last copies of each input draw, which a host
// loop took seconds to make for a 0.5 GB input (H200, 2026-12-02, call 51: 3.6 s of a cold
// kernelbench-31 tune's setup, 7.9 s of kernelbench-32's).
#include <cuda.h>

#include <cstdint>

#include "gpu/cudnn_handle.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

// dst (layout `to`) = src (layout `from`), both dense (n, c, h, w) floats, on the handle's
// stream; asynchronous. Throws fusetune::Error when cuDNN refuses.
void transform_layout(const CudnnHandle& handle, CUdeviceptr src, spec::Layout from, CUdeviceptr dst,
                      spec::Layout to, int64_t n, int64_t c, int64_t h, int64_t w);

}  // namespace fusetune::gpu
