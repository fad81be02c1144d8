#include "gpu/cudnn_format.hpp"

#include <fmt/format.h>

#include <limits>

#include "common/error.hpp"

namespace fusetune::gpu::detail {

cudnnTensorFormat_t cudnn_format(spec::Layout layout, const char* what) {
  switch (layout) {
    case spec::Layout::nchw: return CUDNN_TENSOR_NCHW;
    case spec::Layout::nhwc: return CUDNN_TENSOR_NHWC;
    case spec::Layout::any: break;
  }
  throw Error(ExitCode::failure, fmt::format("{}: layout must be nchw or nhwc, not any", what));
}

int cudnn_int(int64_t value, const char* what) {
  if (value > std::numeric_limits<int>::max() || value < std::numeric_limits<int>::min()) {
    throw InputError(fmt::format("{} = {} is too large for cuDNN (its extents are 32-bit ints)", what, value));
  }
  return static_cast<int>(value);
}

}  // namespace fusetune::gpu::detail
