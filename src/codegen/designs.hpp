#pragma once
// The generated kernel designs and their search spaces, one space_*.cpp per candidate:
//   space_epilogue_nchw.cpp   epilogue after cuDNN's NCHW conv (pointwise, reducing)
//   space_epilogue_nhwc.cpp   epilogue after cuDNN's NHWC conv (pointwise to NCHW or NHWC, reducing)
//   space_unfused.cpp         the op-by-op baseline (one fixed configuration)
//   space_fused_conv.cpp      the implicit-GEMM conv with the epilogue fused (sm_90 only)
// A design is a template, the kernel it defines, and the ParamSpace of its parameters
// (fixed parameters included, with an empty abbrev), constraints and launch shape.
#include <cstdint>
#include <functional>
#include <string>

#include "codegen/param_space.hpp"
#include "codegen/shape.hpp"
#include "gpu/device_limits.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

struct KernelDesign {
  std::string prefix;         // variant-name prefix, e.g. "epilogue.nchw"
  std::string template_file;  // e.g. "epilogue_pointwise.cu"
  std::string kernel_name;    // e.g. "ft_epilogue_pointwise"
  ParamSpace space;
};

// Values of the `layout` parameter: which layout the conv writes y in.
inline constexpr int64_t kLayoutNchw = 0;
inline constexpr int64_t kLayoutNhwc = 1;

// Per-channel vectors are staged in shared memory when they fit in this many bytes; larger
// ones are read through the read-only cache instead, to keep occupancy.
inline constexpr int64_t kStageChanBytes = 8 * 1024;

// y NCHW -> out NCHW (in place): epilogue_pointwise.cu with layout 0.
[[nodiscard]] KernelDesign pointwise_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NCHW -> out (N, 1, P, Q): epilogue_reduce.cu.
[[nodiscard]] KernelDesign reduce_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);

// epilogue_pointwise.cu in either layout: the two designs above and below differ only in the
// name prefix and the extent a vector must divide (P*Q for NCHW, K for NHWC).
[[nodiscard]] KernelDesign pointwise_design(const Shape& s, const gpu::DeviceLimits& dev, int64_t layout);

// y NHWC -> out NHWC (in place): epilogue_pointwise.cu with layout 1.
[[nodiscard]] KernelDesign pointwise_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NHWC -> out NCHW, transpose fused: epilogue_pointwise_nhwc.cu.
[[nodiscard]] KernelDesign pointwise_nhwc_to_nchw_design(const Shape& s, const gpu::DeviceLimits& dev);
// y NHWC -> out (N, 1, P, Q): epilogue_reduce_nhwc.cu.
[[nodiscard]] KernelDesign reduce_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev);

// The unfused baseline's fixed configuration (layout = the conv's layout).
[[nodiscard]] KernelDesign unfused_design(const Shape& s, int64_t layout);
// Elements per thread of an unfused elementwise kernel over `elems` elements: 4 when it
// divides them (16-byte accesses, like PyTorch's vectorized kernels), else 1.
[[nodiscard]] int64_t unfused_vec(int64_t elems);

// ---- fused-conv: fused_conv.cu ----------------------------------------------------------
// Two kernels: ft_fused_conv_pack packs the filters once (untimed), then ft_fused_conv computes
// bm output pixels x every output channel per block (GEMM-M = N*P*Q pixels, GEMM-N = K, GEMM-K
// = C*R*S), looping over the ceil(K / bn) channel tiles inside the block, and applies the
// epilogue (and the channel reduction) to the accumulators before the one store of `out`.
// Its wgmma instructions exist on sm_90a only.

// The GEMM-K tile: one k-tile is 32 floats of C*R*S.
inline constexpr int64_t kFusedConvBk = 32;

// Whether the device can run fused-conv at all: compute capability exactly 9.0 (wgmma is in
// the arch-specific sm_90a target only; sm_100 has no wgmma).
[[nodiscard]] bool fused_conv_applies(const gpu::DeviceLimits& dev);

// The layout fused-conv writes `out` in: as the spec asks; NHWC for out=any.
[[nodiscard]] spec::Layout fused_conv_out_layout(const spec::Problem& problem);

// Parameters bm, bn, stages (tuned), bk, reduce, out_nhwc, in_nhwc (fixed by the problem).
[[nodiscard]] KernelDesign fused_conv_design(const Shape& s, const gpu::DeviceLimits& dev, const spec::Problem& problem);

// The packed filters' extents: K rounded up to bn, and C*R*S rounded up to bk (zero-padded).
[[nodiscard]] int64_t fused_conv_kn_pad(const Shape& s, int64_t bn);
[[nodiscard]] int64_t fused_conv_kg_pad(const Shape& s);
// Threads of ft_fused_conv: one producer warpgroup and bm/64 consumer warpgroups of 128.
[[nodiscard]] int64_t fused_conv_producers(const ParamValues& point);  // producer warpgroups
[[nodiscard]] int64_t fused_conv_threads(const ParamValues& point);
// Dynamic shared memory of ft_fused_conv for a point, the one place it is computed (the source
// gets it as FT_SMEM_BYTES, the launch as smem_bytes): 1024 (alignment slack) + the stage ring
// stages*(bm+bn)*bk floats + an output staging tile of 32 channels x (64+4) pixels per consumer
// warpgroup + 16 bytes of barriers per stage + 64.
[[nodiscard]] int64_t fused_conv_smem_bytes(const ParamValues& point);
// A filter pack's launch (both fused-conv designs): one thread per packed float, 256 per block.
[[nodiscard]] LaunchConfig pack_launch(int64_t floats);
// ft_fused_conv_pack's launch: one thread per packed float, 256 per block.
[[nodiscard]] LaunchConfig fused_conv_pack_launch(const Shape& s, const ParamValues& point);

// ---- fused-conv, halo design: fused_conv_halo.cu ------------------------------------------
// The same two kernels (ft_fused_conv_pack, ft_fused_conv) for NCHW input: a block owns tiles of
// tp x 128/tp output pixels of one image, loads each 32-channel chunk of the input rows they
// need (the halo) once into shared memory, and every filter tap reads it through a shifted
// view, A from registers (wgmma RS form). Persistent: min(tiles, kPersistentBlocks) blocks of
// 384 threads (a filter-streaming warp, three halo warps, two consumer warpgroups), plus 128 per
// epilogue warpgroup (epi_wg 1: one runs the epilogue while the consumers start the next tile;
// epi_wg 2: one per consumer, for chains of costly ops).

// Blocks of a persistent kernel: the SM count of the H100 SXM and H200, a fixed figure so every
// sm_90 device gets the same plan (trust/provenance.cpp regenerates records with generic
// limits). On a part with fewer SMs the last tiles run as a short second wave.
inline constexpr int64_t kPersistentBlocks = 132;

// Whether the halo design can compute the problem: NCHW input (it loads channel planes).
[[nodiscard]] bool fused_conv_halo_applies(const spec::Problem& problem);
// Parameters tp, bn, stages, epi_wg (tuned), cp (below 17 input channels: channels per tap in a
// K tile, C rounded up to 4, 8 or 16 for several taps per K tile, or 32; past them only where no
// point fits with 32: 16, chunks of 16 channels; elsewhere no cp parameter, so those sources and
// names are those of before it, and take 32), reduce,
// out_nhwc (fixed by the problem), split (0: TF32, design "fused-conv.halo"; 1: 3xTF32 for --math
// fp32, design "fused-conv.halo3x").
[[nodiscard]] KernelDesign fused_conv_halo_design(const Shape& s, const gpu::DeviceLimits& dev,
                                                  const spec::Problem& problem, bool split = false);
// The GEMM's K of the halo design, the packed filters' row length: C rounded up to cp, times
// R*S rounded up to 32 / cp taps (one 32-wide K tile per 32 / cp taps of a chunk of cp
// channels); the template's FT_KG_PAD. Rows as fused_conv_kn_pad.
[[nodiscard]] inline int64_t halo_conv_kg_pad(int64_t c, int64_t rs, int64_t cp) {
  const int64_t taps_per_tile = 32 / cp;
  return (c + cp - 1) / cp * ((rs + taps_per_tile - 1) / taps_per_tile) * 32;
}
// The smallest cp that holds every input channel (4, 8 or 16), or 32 past 16 channels.
[[nodiscard]] inline int64_t halo_conv_min_cp(int64_t c) { return c <= 4 ? 4 : c <= 8 ? 8 : c <= 16 ? 16 : 32; }
// A point's cp: its parameter, or 32 where the space has none (past 16 input channels).
[[nodiscard]] int64_t halo_conv_cp(const ParamValues& point);
// Output tiles of a point: N * ceil(P / tp) * ceil(Q / (128 / tp)).
[[nodiscard]] int64_t halo_conv_tiles(const Shape& s, const ParamValues& point);
// Dynamic shared memory of the halo kernel, the template's FT_SMEM_NEEDED: 1024 (alignment
// slack) + stages filter tiles of bn x 128 bytes + two halo buffers + output staging (none with a
// reduction; with the epilogue warpgroup two bn x 64 accumulator buffers) + the channel vectors +
// barriers; a 3xTF32 stage holds two filter tiles.
[[nodiscard]] int64_t halo_conv_smem_bytes(const spec::Conv& conv, const Shape& s, const ParamValues& point);
[[nodiscard]] LaunchConfig halo_conv_pack_launch(const Shape& s, const ParamValues& point);

// ---- fused-gemm: fused_gemm.cu ------------------------------------------------------------
// A linear (or an unbatched matmul with A (M, K)) with a chain-form epilogue: ft_fused_gemm_pack
// packs W once (untimed: one swizzled bn x 32 block per column tile and K tile, TF32 or 3xTF32
// parts), then ft_fused_gemm computes 128 x bn output tiles with wgmma (x from registers, RS
// form) and applies bias + the epilogue to the accumulators; with a reduction over the features a
// block reduces its share of the column tiles and ft_fused_gemm_combine joins csplit partials.

inline constexpr int64_t kFusedGemmBk = 32;       // a K tile: one 128-byte swizzle row of TF32
inline constexpr int64_t kFusedGemmBm = 128;      // rows per block: two consumer warpgroups
inline constexpr int64_t kFusedGemmThreads = 384;  // one producer and two consumer warpgroups

// Whether the design can compute the problem on the device: sm_90 (wgmma), a linear or an
// unbatched matmul without trans_a, the chain-form epilogue, K a multiple of 4.
[[nodiscard]] bool fused_gemm_applies(const spec::Problem& problem, const gpu::DeviceLimits& dev);
// Whether B is (K, N) (a matmul without trans_b): the pack transposes it to W's (N, K).
[[nodiscard]] bool fused_gemm_b_kn(const spec::Problem& problem);
// Parameters bn, stages, csplit (tuned), bm, split, reduce, group_m, b_kn (fixed); design
// "fused-gemm" (TF32) or "fused-gemm3x" (split: 3xTF32, for --math fp32).
[[nodiscard]] KernelDesign fused_gemm_design(const spec::Problem& problem, const gpu::DeviceLimits& dev, bool split);
// The packed W's extents (N rounded up to bn, K rounded up to 32) and floats (times the parts).
[[nodiscard]] int64_t fused_gemm_kn_pad(const spec::Gemm& g, int64_t bn);
[[nodiscard]] int64_t fused_gemm_kg_pad(const spec::Gemm& g);
[[nodiscard]] int64_t fused_gemm_pack_floats(const spec::Gemm& g, const ParamValues& point);
// Dynamic shared memory of ft_fused_gemm, the template's FT_SMEM_NEEDED: 1024 (alignment slack) +
// stages x (the x tile 128 x 128 bytes + the W block bn x 128 bytes, twice under 3xTF32) + 24
// bytes of barriers per stage.
[[nodiscard]] int64_t fused_gemm_smem_bytes(const ParamValues& point);

// Constraints every design shares: the block fits the device (threads per block and per SM,
// a whole number of warps, static shared memory per block and per SM).
void require_block_fits(ParamSpace& space, const gpu::DeviceLimits& dev,
                        std::function<int64_t(const ParamValues&)> threads,
                        std::function<int64_t(const ParamValues&)> smem_bytes);

// Whether the per-channel vectors are staged in shared memory (0/1), and its bytes then.
[[nodiscard]] int64_t stage_chan(const Shape& s);
[[nodiscard]] int64_t staged_chan_bytes(const Shape& s);

[[nodiscard]] inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace fusetune::codegen
