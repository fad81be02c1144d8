#include "reference/model_tensor.hpp"

#include <cstddef>

namespace fusetune::reference::detail {
namespace {

// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const spec::Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

// Calls fn(i, coords) for every flat index i of shape, coords kept incrementally.
template <class Fn>
void for_each_coord(const spec::Shape& shape, Fn&& fn) {
  const int64_t total = spec::elems(shape);
  std::vector<int64_t> c(shape.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    fn(i, c);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++c[d] < shape[d]) break;
      c[d] = 0;
    }
  }
}

}  // namespace

std::vector<int64_t> broadcast_map(const spec::Shape& from, const spec::Shape& out) {
  // stride 0 along dims `from` repeats (size 1) or lacks (rank below out's)
  const std::vector<int64_t> fs = strides_of(from);
  std::vector<int64_t> stride(out.size(), 0);
  const std::size_t lead = out.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d) stride[lead + d] = from[d] == 1 ? 0 : fs[d];
  std::vector<int64_t> map(std::size_t(spec::elems(out)));
  for_each_coord(out, [&](int64_t i, const std::vector<int64_t>& c) {
    int64_t off = 0;
    for (std::size_t d = 0; d < c.size(); ++d) off += c[d] * stride[d];
    map[std::size_t(i)] = off;
  });
  return map;
}

Grouping group_by(const spec::Shape& shape, const std::vector<bool>& reduced) {
  spec::Shape kept = shape;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
  }
  const std::vector<int64_t> ks = strides_of(kept);
  Grouping g;
  g.key.resize(std::size_t(spec::elems(shape)));
  g.count.assign(std::size_t(spec::elems(kept)), 0);
  for_each_coord(shape, [&](int64_t i, const std::vector<int64_t>& c) {
    int64_t key = 0;
    for (std::size_t d = 0; d < c.size(); ++d) key += reduced[d] ? 0 : c[d] * ks[d];
    g.key[std::size_t(i)] = key;
    ++g.count[std::size_t(key)];
  });
  return g;
}

}  // namespace fusetune::reference::detail
