#pragma once
// Seeded test inputs in [-1, 1), for the tests that compare a vendor library's result with a
// float64 reference (gpu_cudnn_test, gpu_cublaslt_test, cublaslt_layout_test).
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace fusetune::testing {

inline std::vector<float> random_floats(std::size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& f : v) f = dist(rng);
  return v;
}

}  // namespace fusetune::testing
