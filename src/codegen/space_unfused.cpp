// The `unfused` baseline: not tuned. One fixed configuration like PyTorch eager's elementwise
// and reduction kernels, so the speedups over it are honest (it must be at least as fast as
// eager itself).
#include "codegen/designs.hpp"

namespace fusetune::codegen {

KernelDesign unfused_design(const Shape&, int64_t layout) {
  KernelDesign d{layout == kLayoutNhwc ? "unfused.nhwc" : "unfused.nchw", "unfused_ops.cu", "ft_op<i>", {}};
  d.space.param("layout", "", {layout}).param("unfused_block", "", {256});
  // Each op kernel has its own launch (plan steps); see generate_unfused.cpp.
  return d;
}

int64_t unfused_vec(int64_t elems) { return elems % 4 == 0 ? 4 : 1; }

}  // namespace fusetune::codegen
