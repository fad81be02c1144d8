#include "gpu/cudnn_conv_desc.hpp"

#include "gpu/cudnn_check.hpp"
#include "gpu/cudnn_filter_desc.hpp"
#include "gpu/cudnn_format.hpp"
#include "gpu/cudnn_tensor_desc.hpp"

namespace fusetune::gpu {

ConvDesc::ConvDesc(const spec::Conv& conv) {
  const int pad_h = detail::cudnn_int(conv.pad_h, "pad_h");
  const int pad_w = detail::cudnn_int(conv.pad_w, "pad_w");
  const int stride_h = detail::cudnn_int(conv.stride_h, "stride_h");
  const int stride_w = detail::cudnn_int(conv.stride_w, "stride_w");
  const int dil_h = detail::cudnn_int(conv.dil_h, "dilation_h");
  const int dil_w = detail::cudnn_int(conv.dil_w, "dilation_w");
  cudnnConvolutionDescriptor_t desc = nullptr;
  FT_CUDNN_CALL(cudnnCreateConvolutionDescriptor(&desc));
  desc_.reset(desc);
  // Cross-correlation (no filter flip) is what PyTorch's Conv2d and our references compute.
  FT_CUDNN_CALL(cudnnSetConvolution2dDescriptor(desc, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
}

void ConvDesc::set_math_type(cudnnMathType_t math_type) {
  FT_CUDNN_CALL(cudnnSetConvolutionMathType(desc_.get(), math_type));
}

cudnnMathType_t ConvDesc::math_type() const {
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
  FT_CUDNN_CALL(cudnnGetConvolutionMathType(desc_.get(), &math_type));
  return math_type;
}

std::array<int, 4> ConvDesc::output_dims(const TensorDesc& x, const FilterDesc& w) const {
  std::array<int, 4> nkpq{};
  FT_CUDNN_CALL(cudnnGetConvolution2dForwardOutputDim(desc_.get(), x.get(), w.get(), &nkpq[0], &nkpq[1],
                                                      &nkpq[2], &nkpq[3]));
  return nkpq;
}

void ConvDesc::Deleter::operator()(cudnnConvolutionDescriptor_t desc) const noexcept {
  FT_CUDNN_CALL_NOEXCEPT(cudnnDestroyConvolutionDescriptor(desc));
}

}  // namespace fusetune::gpu
