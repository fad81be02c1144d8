#pragma once
// The NVRTC source of the version-2 main operator's float64 terms on the GPU
// (kernel_templates/ref_main_any.cu, the shape rendered as #defines) and how its work is cut into
// chunks that fit device memory. GPU-free, so tests compile the source and check the chunks on
// machines without a GPU; reference/gpu_main_terms.hpp launches them.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::reference {

// Device bytes per output while a chunk is computed: y, A, B (doubles) and n (int64).
inline constexpr int64_t kMainTermsBytesPerOutput = 32;
// Outputs per GEMM row tile's row and rows per tile (ref_main_any.cu's FT_MA_TILE).
inline constexpr int64_t kMainTermsGemmTile = 16;

// ref_main_any.cu with the problem's main operator as #defines: FT_MA_KIND (conv or gemm), the
// conv's extents, strides, paddings, dilations, groups and transposition, or the GEMM's batch,
// M, K, N and transposes (linear: W (N, K) is B with trans_b). Throws InputError for an empty or
// malformed main operator.
[[nodiscard]] std::string render_reference_main_source(const spec::Problem& p);

// A conv main operator's shape as ref_main_any.cu's and conv_nd_direct.cu's FT_MA_* #defines,
// followed by ft_conv_taps.cuh (the loop nest both share). Throws InputError for a GEMM or an
// empty or malformed conv.
[[nodiscard]] std::string render_conv_shape_defines(const spec::Problem& p);

// The kernel's name in that source: "ft_ref_main_conv" or "ft_ref_main_gemm".
[[nodiscard]] const char* reference_main_kernel(const spec::Problem& p);

// One launch's share of the outputs. Conv: units are outputs, [unit_begin, unit_begin + units).
// GEMM: units are 16-row tiles of the (batch, M) rows, none straddling two batches; their rows
// are contiguous, so their outputs are [out_begin, out_begin + outputs) of (batch, M, N).
struct MainTermsChunk {
  int64_t unit_begin = 0, units = 0;
  int64_t out_begin = 0, outputs = 0;
};

// The main operator's outputs cut into chunks of at most `max_outputs` each, in order, covering
// every output once. Throws InputError naming both numbers when one unit alone (a GEMM row tile:
// up to 16 N outputs) has more than `max_outputs`.
[[nodiscard]] std::vector<MainTermsChunk> main_terms_chunks(const spec::Problem& p, int64_t max_outputs);

}  // namespace fusetune::reference
