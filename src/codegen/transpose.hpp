#pragma once
// One instance of the batched transpose kernel (kernel_templates/transform_nchw_to_nhwc.cu,
// ft_transpose.cuh): src (batch, rows, cols) -> dst (batch, cols, rows). Layout transforms are
// not tuned: their configuration is derived from the extents (default_transpose), so they
// add no points to a search space.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

struct TransposeConfig {
  std::string kernel_name;
  std::string what;  // comment, e.g. "x (N, C, H*W) -> x_nhwc (N, H*W, C)"
  int64_t batch = 1, rows = 1, cols = 1;
  int64_t tile_r = 32;   // source rows per tile (tile columns are fixed at 32)
  int64_t vec_in = 1;    // floats per load along cols; divides cols
  int64_t vec_out = 1;   // floats per store along rows; divides rows
  int64_t threads = 256;
  // When not empty, tile/vec/ovec/block become variant parameters <prefix>_tile, ... and the
  // instantiation refers to their macros.
  std::string param_prefix;

  // grid.x = batch * ceil(rows / tile_r) * ceil(cols / 32), block.x = threads.
  [[nodiscard]] LaunchConfig launch() const;
  // The FT_DEFINE_TRANSPOSE(...) line.
  [[nodiscard]] std::string instantiation() const;
  // (name, value) of the parameters, empty without param_prefix.
  [[nodiscard]] std::vector<std::pair<std::string, int64_t>> params() const;
  // Bytes read + written.
  [[nodiscard]] double bytes() const;
};

// A configuration that keeps both global phases coalesced and vectorized as far as the
// extents allow: 16-byte loads when cols % 4 == 0, 16-byte stores when rows % 4 == 0.
[[nodiscard]] TransposeConfig default_transpose(std::string kernel_name, std::string what, int64_t batch,
                                                int64_t rows, int64_t cols);

// The largest of 4, 2, 1 that divides extent.
[[nodiscard]] int64_t widest_vector(int64_t extent);

}  // namespace fusetune::codegen
