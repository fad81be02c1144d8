#pragma once
// Owns one cudnnTensorDescriptor_t (STYLE.md 5): a dense 4-d float tensor with logical dims
// (N, C, H, W) stored NCHW or NHWC (channels-last). Needs no GPU.
#include <cudnn.h>

#include <cstdint>

#include "common/unique_handle.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

class TensorDesc {
 public:
  // layout: nchw or nhwc (`any` is for the spec, not for memory: it throws).
  TensorDesc(spec::Layout layout, int64_t n, int64_t c, int64_t h, int64_t w);

  [[nodiscard]] cudnnTensorDescriptor_t get() const noexcept { return desc_.get(); }
  [[nodiscard]] spec::Layout layout() const noexcept { return layout_; }

 private:
  struct Deleter {
    void operator()(cudnnTensorDescriptor_t desc) const noexcept;
  };
  UniqueHandle<cudnnTensorDescriptor_t, Deleter> desc_;
  spec::Layout layout_;
};

}  // namespace fusetune::gpu
