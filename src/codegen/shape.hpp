#pragma once
// The extents codegen needs from a problem, computed once, and their #define block.
#include <cstdint>
#include <string>

#include "spec/problem.hpp"

namespace fusetune::codegen {

struct Shape {
  int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  int64_t p = 1, q = 1;
  int64_t pq = 1, hw = 1, rs = 1;
  bool conv_bias = false;  // the conv has a bias (chan[0 .. K))
  int num_params = 0;      // per-channel parameter vectors after it
  bool index64 = false;    // some buffer is too large for 32-bit flat indices

  [[nodiscard]] int64_t chan_vectors() const { return (conv_bias ? 1 : 0) + num_params; }
  [[nodiscard]] int64_t chan_floats() const { return k * chan_vectors(); }
  [[nodiscard]] int64_t input_elems() const { return n * c * hw; }
  [[nodiscard]] int64_t weight_elems() const { return k * c * rs; }
  [[nodiscard]] int64_t conv_out_elems() const { return n * k * pq; }
  [[nodiscard]] int64_t pixels() const { return n * pq; }  // output pixels, N * P * Q
};

[[nodiscard]] Shape shape_of(const spec::Problem& problem);

// "#define FT_N 128\n#define FT_C 64\n..." for every extent a template may use, plus
// FT_HAS_BIAS, FT_NUM_PARAMS, FT_CHAN_FLOATS and FT_INDEX_64.
[[nodiscard]] std::string shape_defines(const Shape& shape);

// "#define FT_STRIDE_H 1\n..." : FT_STRIDE_H/W, FT_PAD_H/W, FT_DIL_H/W, for templates that
// index the input themselves (fused-conv's implicit GEMM). Kept apart from shape_defines so
// every other design's source, and so every stored record's, stays as it was.
[[nodiscard]] std::string conv_geometry_defines(const spec::Problem& problem);

// Bytes of n fp32 values, as a double for GB/s figures.
[[nodiscard]] inline double fp32_bytes(int64_t n) { return 4.0 * double(n); }

}  // namespace fusetune::codegen
