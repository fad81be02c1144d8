#pragma once
// The seeded value streams every input draw is made of (problem_data.cpp for conv2d chains,
// model_data.cpp for any problem): one engine per (seed, stream, chunk), and our own mapping
// of its bits to floats, so the values are bit-identical on every platform
// (std::uniform_real_distribution differs between standard libraries).
#include <cstdint>
#include <random>

namespace fusetune::reference::detail {

// SplitMix64 finalizer: decorrelates (seed, stream, chunk) into one engine seed, so nearby
// seeds do not give mt19937_64 nearby states.
inline uint64_t mix(uint64_t seed, uint64_t stream, uint64_t chunk = 0) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1) + 0xD1B54A32D192ED03ull * chunk;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Odd multiples of 2^-24 in (0, 1): 2^23 equally likely values with mean exactly 0.5, all
// exact in fp32, never 0 (torch.rand can return 0; a zero input would hide a missing term).
inline float unit_open(std::mt19937_64& g) {
  const uint64_t k = g() >> 41;  // top 23 bits
  return float(double(2 * k + 1) * 0x1p-24);
}

// Odd multiples of b * 2^-23 in (-b, b): symmetric, never 0.
inline float symmetric(std::mt19937_64& g, double b) {
  const auto m = int64_t(2 * (g() >> 41) + 1) - (int64_t(1) << 23);
  return float(double(m) * (b * 0x1p-23));
}

}  // namespace fusetune::reference::detail
