#pragma once
// The tensors a version-2 plan binds (codegen/variant.hpp, BufferKind weights/bias/param/extra):
// their shapes as PyTorch holds them, dense row-major. One place, read by the generator
// (generate_model.cpp) and the checker (variant_check.cpp).
#include <string>
#include <utility>
#include <vector>

#include "spec/problem.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {

// The main operator's input: conv (N, C, [D,] H, W); GEMM (M, K), (K, M) with trans_a, a
// leading batch when batch > 1.
[[nodiscard]] spec::Shape main_input_shape(const spec::Problem& p);
// Its weight: conv (K, C/g, [T,] R, S), transposed conv (C, K/g, [T,] R, S), linear (N, K),
// matmul's B (K, N) or (N, K) with trans_b, a leading batch when batch > 1.
[[nodiscard]] spec::Shape main_weight_shape(const spec::Problem& p);
// Whether it adds a bias (K floats for a conv, N for linear).
[[nodiscard]] bool main_has_bias(const spec::Problem& p);

// Named extents for a buffer of `shape`: the main output's letters ((N, K, [O,] P, Q),
// ([B,] M, N)) when `main_output`, else d0, d1, ...
[[nodiscard]] std::vector<std::pair<std::string, int64_t>> shape_dims(const spec::Problem& p, const spec::Shape& shape,
                                                                      bool main_output = false);

}  // namespace fusetune::codegen
