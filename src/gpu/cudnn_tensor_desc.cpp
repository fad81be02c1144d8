#include "gpu/cudnn_tensor_desc.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "gpu/cudnn_check.hpp"
#include "gpu/cudnn_format.hpp"

namespace fusetune::gpu {

TensorDesc::TensorDesc(spec::Layout layout, int64_t n, int64_t c, int64_t h, int64_t w) : layout_(layout) {
  // Translate before creating anything, so a bad argument leaks nothing.
  const cudnnTensorFormat_t format = detail::cudnn_format(layout, "TensorDesc");
  const int n32 = detail::cudnn_int(n, "tensor N");
  const int c32 = detail::cudnn_int(c, "tensor C");
  const int h32 = detail::cudnn_int(h, "tensor H");
  const int w32 = detail::cudnn_int(w, "tensor W");
  // The legacy descriptors index with 32 bits: cuDNN answers NOT_SUPPORTED past 2^31 - 1 elements
  // (seen on an H100, cuDNN 9.19, 2026-12-06). PyTorch splits the batch there; this runner does not.
  if (n * c * h * w > int64_t(INT32_MAX))
    throw CudnnNotSupported(fmt::format("cuDNN's legacy tensor descriptors take at most 2^31 - 1 elements, not "
                                        "(N, C, H, W) = ({}, {}, {}, {}) = {}",
                                        n, c, h, w, n * c * h * w));
  cudnnTensorDescriptor_t desc = nullptr;
  FT_CUDNN_CALL(cudnnCreateTensorDescriptor(&desc));
  desc_.reset(desc);
  FT_CUDNN_CALL(cudnnSetTensor4dDescriptor(desc, format, CUDNN_DATA_FLOAT, n32, c32, h32, w32));
}

void TensorDesc::Deleter::operator()(cudnnTensorDescriptor_t desc) const noexcept {
  FT_CUDNN_CALL_NOEXCEPT(cudnnDestroyTensorDescriptor(desc));
}

}  // namespace fusetune::gpu
