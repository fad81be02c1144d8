#include "gpu/cudnn_filter_desc.hpp"

#include "gpu/cudnn_check.hpp"
#include "gpu/cudnn_format.hpp"

namespace fusetune::gpu {

FilterDesc::FilterDesc(spec::Layout layout, int64_t k, int64_t c, int64_t r, int64_t s) : layout_(layout) {
  // For filters CUDNN_TENSOR_NHWC means KRSC: the input channel is the contiguous one.
  const cudnnTensorFormat_t format = detail::cudnn_format(layout, "FilterDesc");
  const int k32 = detail::cudnn_int(k, "filter K");
  const int c32 = detail::cudnn_int(c, "filter C");
  const int r32 = detail::cudnn_int(r, "filter R");
  const int s32 = detail::cudnn_int(s, "filter S");
  cudnnFilterDescriptor_t desc = nullptr;
  FT_CUDNN_CALL(cudnnCreateFilterDescriptor(&desc));
  desc_.reset(desc);
  FT_CUDNN_CALL(cudnnSetFilter4dDescriptor(desc, CUDNN_DATA_FLOAT, format, k32, c32, r32, s32));
}

void FilterDesc::Deleter::operator()(cudnnFilterDescriptor_t desc) const noexcept {
  FT_CUDNN_CALL_NOEXCEPT(cudnnDestroyFilterDescriptor(desc));
}

}  // namespace fusetune::gpu
