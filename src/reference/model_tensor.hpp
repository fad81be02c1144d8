#pragma once
// A float64 tensor in row-major logical order and the index maps the model reference
// (model_reference.hpp) builds its stages from: broadcasting and grouping by reduced dims.
// Plain loops over flat indices: the model reference is for small shapes, where clarity
// beats speed. Not part of the public API of reference/.
#include <cstdint>
#include <vector>

#include "spec/shape_rules.hpp"

namespace fusetune::reference::detail {

struct Tensor {
  spec::Shape shape;
  std::vector<double> v;  // elems(shape) values, row-major
};

// For each flat index of `out`, the flat index of the element of a tensor of shape `from`
// that PyTorch's broadcast reads there (`from` aligned at the last dim, size-1 dims repeated).
[[nodiscard]] std::vector<int64_t> broadcast_map(const spec::Shape& from, const spec::Shape& out);

// Elements grouped by the dims a reduction removes: key[i] is the flat index, in the
// keepdim-reduced shape, of the group element i belongs to; count[g] is group g's size.
struct Grouping {
  std::vector<int64_t> key;
  std::vector<int64_t> count;
};
// reduced[d]: dim d is reduced (same rank as shape).
[[nodiscard]] Grouping group_by(const spec::Shape& shape, const std::vector<bool>& reduced);

}  // namespace fusetune::reference::detail
