#include "gpu/cudnn_transform.hpp"

#include "gpu/cudnn_check.hpp"
#include "gpu/cudnn_tensor_desc.hpp"

namespace fusetune::gpu {

void transform_layout(const CudnnHandle& handle, CUdeviceptr src, spec::Layout from, CUdeviceptr dst,
                      spec::Layout to, int64_t n, int64_t c, int64_t h, int64_t w) {
  const TensorDesc src_desc(from, n, c, h, w);
  const TensorDesc dst_desc(to, n, c, h, w);
  const float one = 1.0f, zero = 0.0f;
  FT_CUDNN_CALL(cudnnTransformTensor(handle.get(), &one, src_desc.get(), reinterpret_cast<const void*>(src), &zero,
                                     dst_desc.get(), reinterpret_cast<void*>(dst)));
}

}  // namespace fusetune::gpu
