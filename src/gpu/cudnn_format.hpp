#pragma once
// Translations from spec types to the legacy cuDNN API's argument types, shared by the
// descriptor classes. Internal to the cuDNN wrappers.
#include <cudnn.h>

#include <cstdint>

#include "spec/problem.hpp"

namespace fusetune::gpu::detail {

// nchw -> CUDNN_TENSOR_NCHW, nhwc -> CUDNN_TENSOR_NHWC; `any` throws fusetune::Error: a memory
// layout must be decided (by the tuner) before a descriptor can describe it.
[[nodiscard]] cudnnTensorFormat_t cudnn_format(spec::Layout layout, const char* what);

// The legacy API takes `int` extents; a shape beyond that is bad input, not a cuDNN failure.
[[nodiscard]] int cudnn_int(int64_t value, const char* what);

}  // namespace fusetune::gpu::detail
