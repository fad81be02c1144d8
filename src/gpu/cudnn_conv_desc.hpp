#pragma once
// Owns one cudnnConvolutionDescriptor_t (STYLE.md 5): 2-d cross-correlation (what PyTorch's
// Conv2d computes) with fp32 accumulation; padding, stride and dilation from spec::Conv.
// The math type decides whether tensor cores (TF32 for float data) may be used; it is set
// per run because cuDNN picks kernels by (algorithm, math type). Needs no GPU.
#include <cudnn.h>

#include <array>

#include "common/unique_handle.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

class TensorDesc;
class FilterDesc;

class ConvDesc {
 public:
  explicit ConvDesc(const spec::Conv& conv);

  void set_math_type(cudnnMathType_t math_type);
  [[nodiscard]] cudnnMathType_t math_type() const;

  // cuDNN's own idea of the output (N, K, P, Q) for input x and filters w.
  [[nodiscard]] std::array<int, 4> output_dims(const TensorDesc& x, const FilterDesc& w) const;

  [[nodiscard]] cudnnConvolutionDescriptor_t get() const noexcept { return desc_.get(); }

 private:
  struct Deleter {
    void operator()(cudnnConvolutionDescriptor_t desc) const noexcept;
  };
  UniqueHandle<cudnnConvolutionDescriptor_t, Deleter> desc_;
};

}  // namespace fusetune::gpu
