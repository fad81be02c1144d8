#pragma once
// Shared by the conv_nd graph tests: seeded draws and moving a tensor between its logical
// (channels-first, row-major) order and the memory order its NdTensor strides give.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "reference/draw_rng.hpp"
#include "worker/conv_nd_shape.hpp"

namespace conv_nd_test {

// Odd multiples of 2^-23 in (-1, 1): exact in fp32, never 0 (a zero would hide a missing term).
inline std::vector<float> draw(size_t count, uint64_t seed, uint64_t stream) {
  std::mt19937_64 g(fusetune::reference::detail::mix(seed, stream));
  std::vector<float> v(count);
  for (float& x : v) x = fusetune::reference::detail::symmetric(g, 1.0);
  return v;
}

inline int64_t elems(const fusetune::worker::NdTensor& t) {
  int64_t e = 1;
  for (int64_t d : t.dim) e *= d;
  return e;
}

// Memory offset of logical (row-major) element i.
inline int64_t offset(const fusetune::worker::NdTensor& t, int64_t i) {
  int64_t at = 0;
  for (size_t d = t.dim.size(); d-- > 0;) {
    at += (i % t.dim[d]) * t.stride[d];
    i /= t.dim[d];
  }
  return at;
}

template <typename V>
std::vector<V> to_memory(const std::vector<V>& logical, const fusetune::worker::NdTensor& t) {
  std::vector<V> mem(logical.size());
  for (int64_t i = 0; i < int64_t(logical.size()); ++i) mem[size_t(offset(t, i))] = logical[size_t(i)];
  return mem;
}

template <typename V>
std::vector<V> to_logical(const std::vector<V>& mem, const fusetune::worker::NdTensor& t) {
  std::vector<V> logical(size_t(elems(t)));
  for (int64_t i = 0; i < int64_t(logical.size()); ++i) logical[size_t(i)] = mem[size_t(offset(t, i))];
  return logical;
}

}  // namespace conv_nd_test
