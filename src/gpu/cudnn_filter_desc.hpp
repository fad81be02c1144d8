#pragma once
// Owns one cudnnFilterDescriptor_t (STYLE.md 5): float filters with logical dims (K, C, R, S),
// stored KCRS for NCHW convolutions or KRSC (cuDNN's CUDNN_TENSOR_NHWC) for NHWC ones, the
// pairing cuDNN's fast channels-last kernels expect. Needs no GPU.
#include <cudnn.h>

#include <cstdint>

#include "common/unique_handle.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

class FilterDesc {
 public:
  // layout: nchw (KCRS) or nhwc (KRSC); `any` throws.
  FilterDesc(spec::Layout layout, int64_t k, int64_t c, int64_t r, int64_t s);

  [[nodiscard]] cudnnFilterDescriptor_t get() const noexcept { return desc_.get(); }
  [[nodiscard]] spec::Layout layout() const noexcept { return layout_; }

 private:
  struct Deleter {
    void operator()(cudnnFilterDescriptor_t desc) const noexcept;
  };
  UniqueHandle<cudnnFilterDescriptor_t, Deleter> desc_;
  spec::Layout layout_;
};

}  // namespace fusetune::gpu
