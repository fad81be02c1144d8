#pragma once
// The tensors a version-2 plan binds (codegen/variant.hpp, BufferKind weights/bias/param/extra):
// their shapes as PyTorch holds them, dense row-major. One place, read by the generator
// (generate_model.cpp) and the checker (variant_check.cpp).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/variant.hpp"
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

// Appends b to v's buffer table; its index.
BufferRef add_buffer(Variant& v, Buffer b);

// The main operator's inputs as a plan binds them: x, w and (where it has one) the bias, appended
// in that order.
struct MainBuffers {
  BufferRef x = 0, w = 0;
  std::optional<BufferRef> bias;
};
MainBuffers add_main_inputs(Variant& v, const spec::Problem& p);

// A kernel argument for an optional buffer (the main operator's bias): the buffer, or null.
[[nodiscard]] inline KernelArg buffer_or_null(std::optional<BufferRef> b) {
  return b ? KernelArg{*b} : KernelArg{NullArg{}};
}

// Appends a kernel step: `writes` indexes `args`; `timed` false for a parameter transform (a pack).
void add_kernel(Variant& v, const std::string& name, const LaunchConfig& launch, std::vector<KernelArg> args,
                std::vector<size_t> writes, bool timed);

// One `param<i>` buffer per parameter, of the shapes given (the epilogue's), appended in order.
std::vector<BufferRef> add_param_buffers(Variant& v, const spec::Problem& p, const std::vector<spec::Shape>& shapes);

}  // namespace fusetune::codegen
