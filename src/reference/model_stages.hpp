#pragma once
// The general-form epilogue stages (spec::Stage) in float64, each as PyTorch eager computes
// it: broadcasting elementwise ops (op_math.hpp's functions), reductions with or without
// keepdim, logsumexp, softmax and log_softmax, max and avg pooling, and the normalizations
// with statistics from the data. Not part of the public API of reference/.
#include <vector>

#include "reference/model_tensor.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference::detail {

// op applied to x and its operands, broadcast to `out_shape`. operands[i] is the tensor of
// op.args[i], or null where that argument is a scalar.
[[nodiscard]] Tensor elementwise(const spec::Op& op, const Tensor& x, const std::vector<const Tensor*>& operands,
                                 const spec::Shape& out_shape);

// torch.amin/amax/sum/mean over `dims` (sorted, unique).
[[nodiscard]] Tensor reduce(const Tensor& x, spec::ReduceKind kind, const std::vector<int>& dims, bool keepdim);

// torch.logsumexp: max-shifted, the shift 0 where the max is infinite (as PyTorch does).
[[nodiscard]] Tensor logsumexp(const Tensor& x, const std::vector<int>& dims, bool keepdim);

// torch.softmax / torch.log_softmax over one dim, max-shifted.
[[nodiscard]] Tensor softmax(const Tensor& x, int dim, bool log);

// Max or avg pooling over the last stage.pool_dims dims: floor mode, no dilation; max
// ignores the padding (PyTorch pads with -inf); avg divides by the window clipped to the
// padded input (count_include_pad) or to the input.
[[nodiscard]] Tensor pool(const Tensor& x, const spec::Stage& stage);

// The windows of a pooling stage over a value of `shape`: for each output element (row-major
// in `shape`, the pooled shape), the flat indices of the input elements it reads (padding
// left out) and avg pooling's divisor (PyTorch's count_include_pad rule).
struct PoolWindow {
  std::vector<int64_t> elems;
  int64_t divisor = 1;
};
struct Pooling {
  spec::Shape shape;
  std::vector<PoolWindow> windows;
};
[[nodiscard]] Pooling pool_windows(const spec::Shape& shape, const spec::Stage& stage);

// Which elements of a value of `shape` share a norm stage's statistics.
[[nodiscard]] Grouping norm_groups(const spec::Shape& shape, const spec::Stage& stage);

// batch_norm (training mode: batch statistics), group_norm, instance_norm, layer_norm:
// (x - mean) / sqrt(var + eps) with the biased variance, then * weight + bias where given
// (null: no affine), each broadcast to x.
[[nodiscard]] Tensor norm(const Tensor& x, const spec::Stage& stage, const Tensor* weight, const Tensor* bias);

}  // namespace fusetune::reference::detail
