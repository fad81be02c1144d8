#pragma once
// The five descriptors one convolution needs (x, w, y, bias, conv), built from spec::Conv for
// one memory layout, with cuDNN's output shape checked against ours. Needs no GPU, so shape
// handling is testable on any machine.
#include <array>

#include "gpu/cudnn_conv_desc.hpp"
#include "gpu/cudnn_filter_desc.hpp"
#include "gpu/cudnn_tensor_desc.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

struct CudnnConvDescs {
  // layout applies to x, y and bias (nchw|nhwc) and to the filters (KCRS|KRSC).
  // Throws fusetune::InputError for an impossible shape (non-positive extent, stride or
  // dilation, negative padding, empty output) and fusetune::Error when cuDNN's output dims
  // differ from (n, k, conv.p(), conv.q()).
  CudnnConvDescs(const spec::Conv& conv, spec::Layout layout);

  TensorDesc x;
  FilterDesc w;
  TensorDesc y;
  TensorDesc bias;  // (1, K, 1, 1): broadcast over N, P, Q by cudnnAddTensor
  ConvDesc conv;

 private:
  struct Checked {};
  CudnnConvDescs(const spec::Conv& conv, spec::Layout layout, Checked);
};

// Throws fusetune::InputError unless every extent, stride and dilation is positive, padding is
// not negative and the output is not empty. (spec::Conv::p() divides by the stride.)
const spec::Conv& checked_conv(const spec::Conv& conv);

// Throws fusetune::Error unless cuDNN's (N, K, P, Q) equals the spec's. A mismatch means the
// buffers the tuner sized from spec::Conv do not match what cuDNN would write.
void check_output_dims(const std::array<int, 4>& cudnn_nkpq, const spec::Conv& conv);

}  // namespace fusetune::gpu
