// fusetune: the fused implicit-GEMM convolution, halo-tile design (candidate `fused-conv`,
// design `fused-conv.halo`). One kernel computes the conv on TF32 tensor cores and applies the
// whole epilogue to the accumulators; only the problem's output leaves the SM. NCHW input.
//
// GEMM view: M = output pixels, N = K output channels, K = C*R*S in (32-channel chunk, s, r,
// channel in chunk) order ((chunk, r, s, channel) where FT_AREUSE is off), so a K tile of 32 is
// one filter tap of one chunk. With FT_CP < 32 a chunk is FT_CP channels and a K tile holds
// 32 / FT_CP of its taps (taps past R*S are zero filters): below 17 input channels C rounded up
// to 4, 8 or 16 (C = 8 then runs 12 taps' worth of K for its 9 instead of 36, a third of the
// MMAs); past them 16, where a halo of 32 channel planes outgrows shared memory (stride-2 convs).
// A block owns a tile of FT_TP output rows x FT_TQ output columns of one image (128 pixels; each
// consumer warpgroup a block of 64 of them, FT_CR rows x FT_CW columns) and every output channel,
// ceil(K / FT_BN) column tiles one after the other, so a channel reduction completes inside the
// block.
//
// Why a halo: fused_conv.cu gathers every im2col element on its own (R*S requests per input
// value, measured as the limit: docs/perf-notes.md). Here the input rows the tile needs, with
// the halo the filter taps reach, are loaded ONCE per chunk into shared memory and every tap
// reads them through a shifted view; A goes to wgmma from registers (RS form).
//  - halo by 16-byte cp.async (8/4-byte when W is not a multiple of 4) into a window whose first
//    column is aligned to the vector (the consumers add the tile's misalignment to their pixel
//    offsets); addresses advance by carries on compile-time steps: no division per element.
//  - TF32 rounding once per halo element, in place, after the copies land (not once per tap).
//  - filter tiles are packed already swizzled, one contiguous block per (column tile, K tile),
//    and arrive by one cp.async.bulk each (mbarrier transaction count): one thread.
//  - warp roles: producer warp 0 streams filter tiles, warps 1-3 the halo, each on its own
//    barriers, so the halo of chunk c+1 is in flight while the consumers run the taps of chunk c.
//  - persistent: at most one block per SM (the plan's grid), tiles strided over blocks, so the
//    next tile's halo and filters load under this tile's last taps and epilogue.
//  - bias and per-channel parameters staged once per block in shared memory.
//  - setmaxnreg: producers drop to FT_REGS_P registers, consumers rise to FT_REGS_C.
// Epilogue: bias + ft_chain (or ft_chain_pre, the reduction across the tile's columns in
// registers, across the four lanes of a row by shuffles, across column tiles in registers,
// then ft_chain_post); stores through shared memory 32 channels at a time, so NCHW output is
// written as runs of consecutive pixels and NHWC output as runs of consecutive channels.
//
// Epilogue warpgroup (FT_EPI_WG 1): the consumers hand their raw accumulators to a fourth
// warpgroup through shared memory (one BN x 64 buffer each) and go on with the next tile's taps;
// that warpgroup adds the bias, runs the chain (and the reduction, one pixel per thread) and
// stores. Why: with the epilogue on the consumers the tensor cores idle while it runs: on #31's
// shape leaving the stores out took 16% off the kernel and `mish | mish` instead of `x 2` added
// 43% (docs/perf-notes.md, v8). Costs the shared memory of the buffers (bn <= 128 fits) and
// registers: consumers get 184 instead of 224. FT_EPI_WG 2: two such warpgroups, one per
// consumer's buffer, for chains of costly ops (consumers 160 registers, each epilogue thread 48).
//
// 3xTF32 (FT_SPLIT 1, `--math fp32`): every operand is split into a TF32 "big" part and the
// TF32-rounded remainder, and each product is accumulated as small*big + big*small + big*big in
// fp32 (the small*small term, 2^-22 of the product, is left out): strict-fp32 accuracy from the
// TF32 tensor cores at a third of their rate. The filters are split once by the pack (a stage
// holds the big and the small tile), the input tile per element as the consumers read it (the
// halo stays fp32: no rounding pass).
//
// Launch: grid.x = min(tiles, SMs), block FT_THREADS (384 + 128 * FT_EPI_WG), dynamic shared
// memory FT_SMEM_BYTES (>= FT_SMEM_NEEDED, checked at run time); x 16-byte aligned (the halo
// copies are up to 16 bytes). Needs sm_90a. First measured as the prototype
// bench/fused_conv/halo_conv_v6.cu (docs/perf-notes.md, "v6").
#ifndef FT_GENERATED
#define FT_TP 4
#define FT_TQ 32
#define FT_BN 128
#define FT_STAGES 3
#define FT_REDUCE 0
#define FT_OUT_NHWC 0
#define FT_SPLIT 0
#define FT_N 2
#define FT_C 5
#define FT_H 17
#define FT_W 19
#define FT_K 76
#define FT_R 3
#define FT_S 2
#define FT_STRIDE_H 2
#define FT_STRIDE_W 1
#define FT_PAD_H 1
#define FT_PAD_W 1
#define FT_DIL_H 1
#define FT_DIL_W 2
#define FT_P ((FT_H + 2 * FT_PAD_H - FT_DIL_H * (FT_R - 1) - 1) / FT_STRIDE_H + 1)
#define FT_Q ((FT_W + 2 * FT_PAD_W - FT_DIL_W * (FT_S - 1) - 1) / FT_STRIDE_W + 1)
#define FT_PQ (FT_P * FT_Q)
#define FT_HW (FT_H * FT_W)
#define FT_RS (FT_R * FT_S)
#define FT_HAS_BIAS 1
#define FT_NUM_PARAMS 0
#define FT_CHAN_FLOATS 76
#include "ft_common.cuh"
#include "ft_wgmma.cuh"
#include "ft_tf32.cuh"
__device__ __forceinline__ float ft_chain(float v, int k, const float* __restrict__ chan) { return v * 2.0f; }
#endif

#if FT_TP * FT_TQ != 128
#error "fused_conv_halo.cu: FT_TP * FT_TQ must be 128 (two consumer warpgroups of 64 pixels)"
#endif
#if FT_STAGES < 2
#error "fused_conv_halo.cu: FT_STAGES must be at least 2"
#endif
#if FT_BN != 32 && FT_BN != 64 && FT_BN != 128 && FT_BN != 256
#error "fused_conv_halo.cu: FT_BN must be 32, 64, 128 or 256 (a wgmma N)"
#endif

#ifndef FT_EPI_WG
#define FT_EPI_WG 0
#endif
#if FT_EPI_WG < 0 || FT_EPI_WG > 2
#error "fused_conv_halo.cu: FT_EPI_WG must be 0, 1 or 2 (epilogue warpgroups)"
#endif
#define FT_CONSUMERS 2
#define FT_THREADS (384 + 128 * FT_EPI_WG)
#ifndef FT_CP
#define FT_CP 32  // channels of one filter tap in a K tile of 32
#endif
#if FT_CP != 4 && FT_CP != 8 && FT_CP != 16 && FT_CP != 32
#error "fused_conv_halo.cu: FT_CP must be 4, 8, 16 or 32"
#endif
#define FT_TPK (32 / FT_CP)                              // filter taps per K tile
#define FT_CC FT_CP                                      // channels per chunk (in the halo)
#define FT_CHUNKS ((FT_C + FT_CC - 1) / FT_CC)
#define FT_KTAPS ((FT_RS + FT_TPK - 1) / FT_TPK)         // K tiles per chunk
#define FT_KT (FT_CHUNKS * FT_KTAPS)                     // K tiles: FT_TPK taps of one chunk each
#define FT_KG_PAD (FT_KT * 32)                           // packed filter row length
#define FT_NT ((FT_K + FT_BN - 1) / FT_BN)               // column (output channel) tiles
#define FT_KN_PAD (FT_NT * FT_BN)                        // packed filter rows
#define FT_HR ((FT_TP - 1) * FT_STRIDE_H + (FT_R - 1) * FT_DIL_H + 1)  // halo rows
#define FT_HC ((FT_TQ - 1) * FT_STRIDE_W + (FT_S - 1) * FT_DIL_W + 1)  // halo columns used
// Vector width of the halo copies: a vector never straddles the image's edge (rows start at a
// multiple of W, and the window starts at a multiple of the width), so it is all in or all out.
#define FT_VW ((FT_W % 4 == 0) ? 4 : (FT_W % 2 == 0) ? 2 : 1)
// Vectors per halo row: the window starts up to FT_VW - 1 columns before the first used one.
#define FT_HCV ((FT_HC + 2 * (FT_VW - 1)) / FT_VW)
#define FT_HCP (FT_HCV * FT_VW)                          // floats per halo row
// Floats per halo channel, padded to 8 mod 32 (a warp's A loads, 8 pixels x 4 channels, hit
// 32 banks); a multiple of 4, so 16-byte vectors stay aligned.
#define FT_CHS ((FT_HR * FT_HCP + 23) / 32 * 32 + 8)
#define FT_HALO_BYTES (FT_CC * FT_CHS * 4)
#define FT_HVEC (FT_CC * FT_HR * FT_HCV)                 // copies per chunk
#define FT_HTHREADS 96                                   // producer warps 1-3
#define FT_HITER ((FT_HVEC + FT_HTHREADS - 1) / FT_HTHREADS)
#define FT_RVEC (FT_HALO_BYTES / 16)                     // 16-byte words of the rounding pass
#define FT_RITER ((FT_RVEC + FT_HTHREADS - 1) / FT_HTHREADS)
#ifndef FT_SPLIT
#define FT_SPLIT 0  // 1: 3xTF32 (above)
#endif
#define FT_B_BYTES (FT_BN * 128)                         // one filter tile: BN rows of 32 TF32
#define FT_STAGE_B_BYTES (FT_B_BYTES * (1 + FT_SPLIT))   // a stage: the tile (and its small part)
#define FT_STAGE_B_FLOATS (FT_STAGE_B_BYTES / 4)
#define FT_EPI_PITCH 68  // 64 pixels + 4: the accumulator writes and the row reads spread over banks
// NHWC output without the epilogue warpgroup: the tile is staged pixel-major, 32 channels + 8 per
// pixel, so the accumulator pairs go in as 8-byte words and a pixel's channels come out as 16-byte
// words, both free of bank conflicts (a column-major tile read across channels was 4-way).
#define FT_EPI_NHWC_PITCH 40
#if FT_EPI_WG
#define FT_EPI_BYTES (FT_CONSUMERS * FT_BN * FT_EPI_PITCH * 4)  // raw accumulators, a buffer per consumer
#elif FT_REDUCE
#define FT_EPI_BYTES 0
#elif FT_OUT_NHWC
#define FT_EPI_BYTES (FT_CONSUMERS * 64 * FT_EPI_NHWC_PITCH * 4)
#else
#define FT_EPI_BYTES (FT_CONSUMERS * 32 * FT_EPI_PITCH * 4)
#endif
#define FT_CHAN_BYTES ((FT_CHAN_FLOATS * 4 + 15) / 16 * 16)
// Two epilogue warpgroups and a channel reduction: a pixel's columns are split between two
// threads, whose partial results meet here (64 per warpgroup).
#define FT_EPI_RED_BYTES ((FT_EPI_WG == 2 && FT_REDUCE) ? 2 * 64 * 4 : 0)
#define FT_EPI_BARS (FT_EPI_WG ? 1 : 0)  // e_full / e_empty: a pair per consumer
#define FT_TILES_P ((FT_P + FT_TP - 1) / FT_TP)
#define FT_TILES_Q ((FT_Q + FT_TQ - 1) / FT_TQ)
#define FT_TILES ((long long)FT_N * FT_TILES_P * FT_TILES_Q)
// A consumer's 64 pixels: a block of FT_CR rows x FT_CW columns of the tile, its local pixels px
// row-major in it; consumer c's block starts at tile row c * FT_CBR and column c * FT_CBC. Tiles
// 64 wide give each consumer 32 columns of both rows (not one row), so its block has two rows too.
#if FT_TQ >= 64
#define FT_CW (FT_TQ / 2)
#define FT_CBR 0
#define FT_CBC FT_CW
#else
#define FT_CW FT_TQ
#define FT_CBR (64 / FT_TQ)
#define FT_CBC 0
#endif
#define FT_CR (64 / FT_CW)
#if FT_CR * FT_CW != 64
#error "fused_conv_halo.cu: a consumer's 64 pixels must tile whole rows (FT_TQ a power of two)"
#endif
// Where a block has two rows or more, the MMA rows a thread holds (row0 and row0 + 8, ft_mrow_px)
// are one pixel and the pixel below it. With the output stride equal to the filter's dilation
// down the rows, the input rows tap (r + 1, s) reads for the upper pixel are the ones tap (r, s)
// read for the lower: half of the A fragment is already in registers (FT_AREUSE), and the taps
// run filter row fastest so the fragment to reuse is the last tap's. Why: the consumers' 16
// shared-memory loads per tap were 36% of the warps' stalls (docs/perf-notes.md, "SS form");
// with R = 3 this leaves 2 of 3 taps 8 of them.
// Not with two epilogue warpgroups (consumers of 160 registers) or 3xTF32 (twice the fragments):
// the copies' registers made ptxas serialize the MMAs there, or spill.
#define FT_PAIR (FT_CR >= 2 && FT_CW % 8 == 0)
#ifndef FT_AREUSE
// (Nor where a K tile holds several taps: its fragments then come from several taps at once.)
#define FT_AREUSE (FT_PAIR && FT_R > 1 && FT_STRIDE_H == FT_DIL_H && FT_EPI_WG != 2 && !FT_SPLIT && FT_TPK == 1)
#endif
#if FT_AREUSE && !(FT_PAIR && FT_STRIDE_H == FT_DIL_H && FT_TPK == 1)
#error "fused_conv_halo.cu: FT_AREUSE needs paired MMA rows (FT_PAIR), FT_STRIDE_H == FT_DIL_H and one tap per K tile"
#endif
// The t-th filter tap of a chunk (t < R*S): filter row fastest under FT_AREUSE, else filter column.
__host__ __device__ constexpr int ft_tap_r(int t) { return FT_AREUSE ? t % FT_R : t / FT_S; }
__host__ __device__ constexpr int ft_tap_s(int t) { return FT_AREUSE ? t / FT_R : t % FT_S; }
// Column `col` (a multiple of 4) of a chunk's K tile kt: its tap (kt * FT_TPK + col / FT_CP; a
// padding tap past R*S reads the last real one, whose filter there is zero) and channel
// (col % FT_CP) -> the halo offset, before the pixel's and the lane's channel (pixb). With one
// tap per K tile: channel col of tap kt. Arguments known at compile time fold to a constant.
__device__ __forceinline__ int ft_kcol_off(int kt, int col) {
  const int t = kt * FT_TPK + col / FT_CP < FT_RS ? kt * FT_TPK + col / FT_CP : FT_RS - 1;
  return (col % FT_CP) * FT_CHS + ft_tap_r(t) * FT_DIL_H * FT_HCP + ft_tap_s(t) * FT_DIL_W;
}
// [pad to 1024][filter stages][halo x 2][epilogue tiles][channel vectors][barriers]. The
// generator computes the same sum (codegen/space_fused_conv_halo.cpp) for the launch.
#define FT_SMEM_NEEDED                                                                                  \
  (1024 + FT_STAGES * FT_STAGE_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES + FT_CHAN_BYTES + FT_EPI_RED_BYTES + \
   16 * (FT_STAGES + 2) + 32 * FT_EPI_BARS + 64)
#ifndef FT_SMEM_BYTES
#define FT_SMEM_BYTES FT_SMEM_NEEDED
#endif
static_assert(FT_SMEM_BYTES >= FT_SMEM_NEEDED, "fused_conv_halo.cu: FT_SMEM_BYTES below the layout's needs");
// A fragments of the last FT_AB K tiles ("taps") stay in registers while their MMAs run (wgmma.wait
// FT_AB - 1 after each tap). With FT_KTAPS a multiple of FT_AB a tap's buffer is the same in every
// chunk, so chunks follow each other without draining the MMAs (FT_CROSS); 3 buffers where R*S
// is a multiple of 3 (the common 3 x 3), except in 3xTF32, whose small parts double them.
#ifndef FT_AB
#if !FT_SPLIT && FT_KTAPS % 3 == 0 && FT_STAGES >= 3
#define FT_AB 3
#else
#define FT_AB 2
#endif
#endif
#ifndef FT_CROSS
// the chunk loop is unrolled for it (below): bounded so NVRTC stays within seconds (3 chunks
// of bn 256 took 9.5 s of CPU, 2 of bn 128 about 1 s)
#define FT_CROSS (FT_KTAPS % FT_AB == 0 && FT_CHUNKS * FT_BN <= 256)
#endif
constexpr int ft_chunk_unroll = FT_CROSS ? FT_CHUNKS : 1;
// 3xTF32 past two chunks promotes at each chunk's drain (free: the MMAs are done there): the
// tensor cores' fp32 accumulation truncates each step's sum, an error of one sign that grows with
// the running sum (call 129: a C = 256, 3 x 3 conv's c16 variants at 3.4x KernelBench's 1e-4);
// each chunk's partial sum joins `tot` by a correctly rounded add instead. Two chunks (C = 64,
// the presets, within the tolerance) keep the code they were tuned with.
#define FT_PROMOTE (FT_SPLIT && !FT_CROSS && FT_CHUNKS > 2)
// the epilogue warpgroup's NCHW store loop: elements whose chains interleave (registers allow)
constexpr int ft_epi_unroll = FT_EPI_WG == 2 ? 4 : 8;
// After tap t's wait the consumers release tap t - (FT_AB - 1)'s stage, the one tap t + 1 refills
// when there are just FT_AB stages.
static_assert(FT_STAGES >= FT_AB, "fused_conv_halo.cu: fewer filter stages than taps in flight");
#define FT_REGS_P 56  // producer warpgroup: addresses and loop counters only
#if FT_EPI_WG == 2
// 640 threads start with 96 registers each (65536 / 640, in units of 8): a pool of 61440
#define FT_REGS_C 160  // consumers: BN/2 accumulators + FT_AB taps of A fragments
#define FT_REGS_E 48   // each epilogue warpgroup: the op chain, four elements at a time
#elif FT_EPI_WG
#define FT_REGS_C 184  // consumers: BN/2 accumulators + FT_AB taps of A fragments
#define FT_REGS_E 88   // the epilogue warpgroup: the op chain
#else
#define FT_REGS_C 224  // consumers: BN/2 accumulators + FT_AB taps of A fragments + the epilogue
#define FT_REGS_E 0
#endif
// setmaxnreg moves registers within the pool the block was launched with: FT_THREADS times the
// per-thread count __launch_bounds__(FT_THREADS, 1) leaves (a multiple of 8)
static_assert(128 * FT_REGS_P + 256 * FT_REGS_C + 128 * FT_EPI_WG * FT_REGS_E <=
                  FT_THREADS * (65536 / FT_THREADS / 8 * 8),
              "setmaxnreg: register file over-committed");

// Test-only planted bugs (FUSETUNE_TEST_PLANT, codegen/planted.cpp): each `#if defined(FT_PLANT_...)`
// below makes a wrong kernel that verification must reject; real variants define none of them and
// compile to the same code as without these lines.
//   FT_PLANT_SKIP_CHUNK     the last 32-channel chunk is never loaded (its halo reads as zeros)
//   FT_PLANT_HALO_EDGE      the halo's bounds check is off by one row: the image's last row reads as zero
//   FT_PLANT_WRONG_FILTER   K tile R*S - 1 is packed with the filter of tap 0
//   FT_PLANT_STALE_STAGE    the last K tile of a chunk reads the previous one's filter stage (retired by a
//                           full wait before that stage goes back: deterministic, no race)
//   FT_PLANT_TRUNCATE_TF32  inputs (here) and filters (ft_tf32, ft_wgmma.cuh) truncated to TF32
//                           (toward zero, as cvt.rz) instead of rounded to nearest
//   FT_PLANT_SPLIT_DROP     3xTF32: the small(A) * big(B) products are left out
//   FT_PLANT_REDUCE_INIT    the channel reduction starts from 0, not its identity (ft_common.cuh)
//   FT_PLANT_DROP_LAST_TILE the last column tile is left out of the channel reduction (FT_NT > 1)
// (FT_PLANT_H, FT_REDUCE_INIT, FT_PLANT_TILE_IN: ft_common.cuh)
// 3xTF32: a value's big part (TF32, to nearest) and its small part (the remainder, exact in
// fp32, rounded to TF32), both with their low 13 bits zero as wgmma reads them; an infinity, a
// NaN, or a value whose big part rounds to infinity has no small part. Filters (the pack) and
// inputs (the consumers) are split alike.
__device__ __forceinline__ void ft_split(unsigned u, unsigned& big, unsigned& small) {
  big = ft_tf32_bits(u);
  const float d = __uint_as_float(u) - __uint_as_float(big);
  small = ft_tf32_bits((__float_as_uint(d) & 0x7f800000u) != 0x7f800000u ? __float_as_uint(d) : 0u);
}

// Filters (K, C, R, S) -> one contiguous FT_BN x 128-byte block per (column tile, K tile), in
// (chunk, tap, c mod FT_CP) K order (taps as ft_tap_r/s order them, FT_TPK of them per K tile),
// rounded to TF32, 16-byte chunks already in the 128-byte
// swizzle (chunk j of row n at j ^ (n % 8)), zero-padded: a stage is one bulk copy. Untimed
// (weights are parameters). Under FT_SPLIT each block is followed by its small part.
extern "C" __global__ void __launch_bounds__(256) ft_fused_conv_pack(const float* __restrict__ w,
                                                                     float* __restrict__ wpack) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)FT_KN_PAD * FT_KG_PAD * (1 + FT_SPLIT)) return;
  const long long blk = i / (FT_BN * 32) / (1 + FT_SPLIT);
  const int part = (int)(i / (FT_BN * 32) % (1 + FT_SPLIT));  // 0: big (or the only), 1: small
  const int within = (int)(i % (FT_BN * 32));
  const int nt = (int)(blk / FT_KT), kt = (int)(blk % FT_KT);
  const int row = within >> 5, j = within & 31;
  const int kl = ((((j >> 2) ^ row) & 7) << 2) | (j & 3);
  const int chunk = kt / FT_KTAPS;
  const int t = kt % FT_KTAPS * FT_TPK + kl / FT_CP;  // the chunk's t-th tap (past R*S: padding)
#if defined(FT_PLANT_WRONG_FILTER)
  const int tap = t == FT_RS - 1 ? 0 : ft_tap_r(t) * FT_S + ft_tap_s(t);
#else
  const int tap = ft_tap_r(t) * FT_S + ft_tap_s(t);  // the filter's own (r, s) order
#endif
  const int n = nt * FT_BN + row, c = chunk * FT_CC + kl % FT_CP;
  const float v = (n < FT_K && c < FT_C && t < FT_RS) ? w[((long long)n * FT_C + c) * FT_RS + tap] : 0.0f;
#if FT_SPLIT
  unsigned big, small;
  ft_split(__float_as_uint(v), big, small);
  wpack[i] = __uint_as_float(part == 0 ? big : small);
#else
  (void)part;
  wpack[i] = ft_tf32(v);
#endif
}

// Bias and the pre-reduction (or whole) chain on one accumulator of output channel k; chan is
// the block's shared-memory copy.
__device__ __forceinline__ float ft_epilogue_value(float v, int k, const float* chan) {
#if FT_HAS_BIAS
  v += chan[FT_BIAS_K(k)];
#endif
#if FT_REDUCE
  return FT_PLANT_CHAIN(ft_chain_pre, v, FT_CHAN_K(k), chan);
#else
  return FT_PLANT_CHAIN(ft_chain, v, FT_CHAN_K(k), chan);
#endif
}

// Tile index -> image, first output row, first output column.
__device__ __forceinline__ void ft_tile_coords(long long tile, long long& n, int& tp0, int& tq0) {
  tq0 = (int)(tile % FT_TILES_Q) * FT_TQ;
  tile /= FT_TILES_Q;
  tp0 = (int)(tile % FT_TILES_P) * FT_TP;
  n = tile / FT_TILES_P;
}

// MMA row m (0..63, a consumer's) -> its local pixel: row-major, or paired down columns (FT_PAIR):
// m = 16 w + 8 h + g is column 8 (w % (FT_CW / 8)) + g of block row 2 (w / (FT_CW / 8)) + h.
__device__ __forceinline__ int ft_mrow_px(int m) {
#if FT_PAIR
  const int w = m >> 4, h = (m >> 3) & 1, g = m & 7;
  constexpr int w8 = FT_CW / 8;
  return (2 * (w / w8) + h) * FT_CW + 8 * (w % w8) + g;
#else
  return m;
#endif
}
// Consumer c's local pixel px -> tile row and column.
__device__ __forceinline__ int ft_px_row(int c, int px) { return c * FT_CBR + px / FT_CW; }
__device__ __forceinline__ int ft_px_col(int c, int px) { return c * FT_CBC + px % FT_CW; }

extern "C" __global__ void __launch_bounds__(FT_THREADS, 1)
    ft_fused_conv(const float* __restrict__ x, const float* __restrict__ wpack, float* __restrict__ out,
                  const float* __restrict__ chan) {
  extern __shared__ __align__(1024) unsigned char ft_smem_raw[];
  unsigned dyn_bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn_bytes));
  if (dyn_bytes < FT_SMEM_NEEDED) __trap();  // launched with less than the layout below needs

  const unsigned raw = (unsigned)__cvta_generic_to_shared(ft_smem_raw);
  const unsigned smem0 = (raw + 1023u) & ~1023u;
  unsigned char* const base = ft_smem_raw + (smem0 - raw);
  float* const halo_ptr = reinterpret_cast<float*>(base + FT_STAGES * FT_STAGE_B_BYTES);
  const unsigned halo0 = smem0 + FT_STAGES * FT_STAGE_B_BYTES;
  float* const epi_all = reinterpret_cast<float*>(base + FT_STAGES * FT_STAGE_B_BYTES + 2 * FT_HALO_BYTES);
  float* const chan_s =
      reinterpret_cast<float*>(base + FT_STAGES * FT_STAGE_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES);
  float* const epi_red = reinterpret_cast<float*>(base + FT_STAGES * FT_STAGE_B_BYTES + 2 * FT_HALO_BYTES +
                                                   FT_EPI_BYTES + FT_CHAN_BYTES);
  const unsigned bars =
      smem0 + FT_STAGES * FT_STAGE_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES + FT_CHAN_BYTES + FT_EPI_RED_BYTES;
  const unsigned b_full = bars, b_empty = bars + 8 * FT_STAGES;
  const unsigned h_full = bars + 16 * FT_STAGES, h_empty = h_full + 16;
  const unsigned e_full = h_empty + 16, e_empty = e_full + 16;  // FT_EPI_WG: a pair per consumer
  if (threadIdx.x == 0) {
    for (int s = 0; s < FT_STAGES; ++s) {
      ft_mbar_init(b_full + 8 * s, 1);                 // the bulk copy's transaction count
      ft_mbar_init(b_empty + 8 * s, 4 * FT_CONSUMERS);  // one arrival per consumer warp
    }
    for (int h = 0; h < 2; ++h) {
      ft_mbar_init(h_full + 8 * h, FT_HTHREADS);
      ft_mbar_init(h_empty + 8 * h, 4 * FT_CONSUMERS);
    }
    for (int c = 0; c < FT_CONSUMERS * FT_EPI_BARS; ++c) {
      ft_mbar_init(e_full + 8 * c, 4);   // one arrival per warp of consumer c
      ft_mbar_init(e_empty + 8 * c, 4);  // one per warp of the epilogue warpgroup that empties it
    }
    ft_fence_mbar_init();  // the bulk copies (async proxy) signal these barriers
  }
  for (int i = (int)threadIdx.x; i < FT_CHAN_FLOATS; i += FT_THREADS) chan_s[i] = chan[i];
  __syncthreads();

  const int wg = (int)threadIdx.x / 128;
  if (wg == 0) {
    ft_setmaxnreg_dec<FT_REGS_P>();
    const int warp = (int)threadIdx.x >> 5;
    if (warp == 0) {
      // ---- filter tiles: one bulk copy per K tile ----
      if (threadIdx.x != 0) return;
      int stage = 0;
      unsigned phase = 0;
      for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
        for (int nt = 0; nt < FT_NT; ++nt) {
          const float* src = wpack + (long long)nt * FT_KT * FT_STAGE_B_FLOATS;
          for (int kt = 0; kt < FT_KT; ++kt) {
            ft_mbar_wait(b_empty + 8 * stage, phase ^ 1);
            ft_mbar_expect_tx(b_full + 8 * stage, FT_STAGE_B_BYTES);
            ft_bulk_g2s(smem0 + stage * FT_STAGE_B_BYTES, src + (long long)kt * FT_STAGE_B_FLOATS, FT_STAGE_B_BYTES,
                        b_full + 8 * stage);
            if (++stage == FT_STAGES) {
              stage = 0;
              phase ^= 1;
            }
          }
        }
      }
      return;
    }
    // ---- halo: warps 1-3 ----
    const int ht = (int)threadIdx.x - 32;
    // This thread's first copy (channel, halo row, vector); later ones follow by compile-time
    // steps of FT_HTHREADS copies with carries, the same sequence for every chunk.
    const int v_first = ht % FT_HCV, row_first = ht / FT_HCV;
    const int hr_first = row_first % FT_HR, cl_first = row_first / FT_HR;
    constexpr int DV = FT_HTHREADS % FT_HCV, DROW = FT_HTHREADS / FT_HCV;
    constexpr int DHR = DROW % FT_HR, DCL = DROW / FT_HR;
    int ci = 0;
    for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
      long long n;
      int tp0, tq0;
      ft_tile_coords(tile, n, tp0, tq0);
      const int ih0 = tp0 * FT_STRIDE_H - FT_PAD_H;
      const int iw0 = tq0 * FT_STRIDE_W - FT_PAD_W;
      const int iwa = iw0 & -FT_VW;  // window start: floor to the vector width, negatives too
      for (int nt = 0; nt < FT_NT; ++nt) {
        for (int ch = 0; ch < FT_CHUNKS; ++ch, ++ci) {
          const int h = ci & 1;
          ft_mbar_wait(h_empty + 8 * h, ((ci >> 1) & 1) ^ 1);
          const unsigned hb = halo0 + h * FT_HALO_BYTES;
          const float* const xc = x + (n * FT_C + ch * FT_CC) * (long long)FT_HW;
          // running image row/column of the copy and its offsets in x (from xc) and in the halo
          int iwv = iwa + v_first * FT_VW, ihv = ih0 + hr_first, cl = cl_first;
          int goff = cl * FT_HW + ihv * FT_W + iwv;
          int soff = cl * FT_CHS + hr_first * FT_HCP + v_first * FT_VW;
          const int iw_end = iwa + FT_HCP, ih_end = ih0 + FT_HR;
#pragma unroll 4
          for (int j = 0; j < FT_HITER; ++j) {
            if (FT_HVEC % FT_HTHREADS == 0 || cl < FT_CC) {
#if defined(FT_PLANT_SKIP_CHUNK)
              const bool ok = ch != FT_CHUNKS - 1 && (FT_C % FT_CC == 0 || ch * FT_CC + cl < FT_C) &&
                              (unsigned)ihv < (unsigned)FT_PLANT_H && (unsigned)iwv < (unsigned)FT_W;
#else
              const bool ok = (FT_C % FT_CC == 0 || ch * FT_CC + cl < FT_C) && (unsigned)ihv < (unsigned)FT_PLANT_H &&
                              (unsigned)iwv < (unsigned)FT_W;
#endif
              // a zero-filled copy still names a mapped address: the chunk's first element
              ft_cp_async_zfill<4 * FT_VW>(hb + 4 * soff, xc + (ok ? goff : 0), ok);
            }
            iwv += DV * FT_VW;
            goff += DV * FT_VW;
            soff += DV * FT_VW;
            const bool cv = iwv >= iw_end;  // past the row's last vector: to the next row
            if (cv) {
              iwv -= FT_HCP;
              goff += FT_W - FT_HCP;  // soff: -FT_HCP for the column, +FT_HCP for the row
              ++ihv;
            }
            ihv += DHR;
            goff += DHR * FT_W;
            soff += DHR * FT_HCP;
            const bool chr = ihv >= ih_end;  // past the halo's last row: to the next channel
            if (chr) {
              ihv -= FT_HR;
              goff += FT_HW - FT_HR * FT_W;
              soff += FT_CHS - FT_HR * FT_HCP;
              ++cl;
            }
            cl += DCL;
            goff += DCL * FT_HW;
            soff += DCL * FT_CHS;
          }
          ft_cp_async_commit();  // wait_group counts committed groups only
          ft_cp_async_wait<0>();
#if !FT_SPLIT
          // every halo thread's copies have landed: round the whole buffer to TF32 in place
          // (ft_tf32.cuh's ft_tf32_bits: as cvt.rna, in integer instructions)
          asm volatile("bar.sync 3, %0;\n" ::"n"(FT_HTHREADS) : "memory");
          uint4* const hv = reinterpret_cast<uint4*>(halo_ptr + h * (FT_HALO_BYTES / 4));
#pragma unroll 4
          for (int j = 0; j < FT_RITER; ++j) {
            const int i = ht + FT_HTHREADS * j;
            if (FT_RVEC % FT_HTHREADS == 0 || i < FT_RVEC) {
              uint4 u = hv[i];
#if defined(FT_PLANT_TRUNCATE_TF32)
              u.x &= 0xffffe000u;
              u.y &= 0xffffe000u;
              u.z &= 0xffffe000u;
              u.w &= 0xffffe000u;
#else
              u.x = ft_tf32_bits(u.x);
              u.y = ft_tf32_bits(u.y);
              u.z = ft_tf32_bits(u.z);
              u.w = ft_tf32_bits(u.w);
#endif
              hv[i] = u;
            }
          }
#else
          (void)halo_ptr;  // 3xTF32: the consumers split the fp32 values as they read them
#endif
          ft_mbar_arrive(h_full + 8 * h);
        }
      }
    }
    return;
  }

#if FT_EPI_WG
  // ---- epilogue warpgroup(s) ---------------------------------------------------------------------
  // One warpgroup empties both consumers' buffers in turn; two (FT_EPI_WG 2) empty one each, so a
  // chain of costly ops has two warps per scheduler instead of one: on #31's shape `gelu |
  // softplus` took 1.79 ms instead of 2.15 (docs/perf-notes.md, v11).
  if (wg > FT_CONSUMERS) {
    ft_setmaxnreg_dec<FT_REGS_E>();
    const int ew = wg - 1 - FT_CONSUMERS;  // which epilogue warpgroup
    const int tid = (int)threadIdx.x - 128 * wg, lane = tid & 31;
    int ei = 0;  // buffers taken so far: the barriers' phase
    for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
      long long n;
      int tp0, tq0;
      ft_tile_coords(tile, n, tp0, tq0);
#if FT_REDUCE
#if FT_EPI_WG == 2
      // consumer ew's pixel px; this thread takes every other column (the other thread of the
      // pair, tid ^ 64, the rest)
      const int c = ew, px = tid & 63, col0 = tid >> 6;
      constexpr int col_step = 2;
#else
      // one pixel per thread: consumer c's pixel px, every channel of every column tile
      const int c = tid >> 6, px = tid & 63, col0 = 0;
      constexpr int col_step = 1;
#endif
      float red = FT_REDUCE_INIT();
#endif
      for (int nt = 0; nt < FT_NT; ++nt, ++ei) {
#if FT_REDUCE
#if FT_EPI_WG == 2
        ft_mbar_wait(e_full + 8 * c, ei & 1);
#else
        ft_mbar_wait(e_full, ei & 1);
        ft_mbar_wait(e_full + 8, ei & 1);
#endif
        const float* const buf = epi_all + c * FT_BN * FT_EPI_PITCH + px;
#pragma unroll 8
        for (int i = 0; i < FT_BN / col_step; ++i) {
          const int col = col_step * i + col0;
          const int k = nt * FT_BN + col;
          if ((FT_K % FT_BN == 0 || k < FT_K) && !ft_plant_skips_channel(k) && FT_PLANT_TILE_IN(nt))
            red = ft_reduce_step(red, ft_epilogue_value(buf[col * FT_EPI_PITCH], k, chan_s));
        }
        __syncwarp();
        if (lane == 0) {
#if FT_EPI_WG == 2
          ft_mbar_arrive(e_empty + 8 * c);
#else
          ft_mbar_arrive(e_empty);
          ft_mbar_arrive(e_empty + 8);
#endif
        }
#else
        for (int c = ew; c < FT_CONSUMERS; c += FT_EPI_WG) {
          ft_mbar_wait(e_full + 8 * c, ei & 1);
          const float* const buf = epi_all + c * FT_BN * FT_EPI_PITCH;
#if FT_OUT_NHWC
          // a warp stores 32 consecutive channels of one pixel: 128 contiguous bytes
          const int chn = tid & 31;
#pragma unroll 4
          for (int i = 0; i < FT_BN / 2; ++i) {  // (FT_BN / 32) * 64 pixel-chunk pairs, 4 warps
            const int j = 4 * i + (tid >> 5);
            const int cb = j >> 6, px = j & 63;
            const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
            const long long pq = (long long)p * FT_Q + q;
            const int k = nt * FT_BN + 32 * cb + chn;
            if ((FT_K % FT_BN == 0 || k < FT_K) && p < FT_P && q < FT_Q && !ft_plant_skips(n, pq))
              out[(n * FT_PQ + pq) * FT_K + k] = ft_epilogue_value(buf[(32 * cb + chn) * FT_EPI_PITCH + px], k, chan_s);
          }
#else
          // a thread stores one pixel of every other channel; a warp 32 consecutive pixels of one
          const int px = tid & 63;
          const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
          const long long pq = (long long)p * FT_Q + q;
          if (p < FT_P && q < FT_Q && !ft_plant_skips(n, pq)) {
            float* const dst = out + n * FT_K * FT_PQ + pq;
            // A trip count known at compile time: the unrolled elements form one block, so their
            // chains interleave (a loop bound of tid's made each its own block, chains in series:
            // `mish | mish` cost +18% over `x 2`, docs/perf-notes.md v8). Two warpgroups have
            // half the registers each: four at a time.
#pragma unroll ft_epi_unroll
            for (int i = 0; i < FT_BN / 2; ++i) {
              const int col = 2 * i + (tid >> 6);
              const int k = nt * FT_BN + col;
              if (FT_K % FT_BN == 0 || k < FT_K)
                dst[(long long)k * FT_PQ] = ft_epilogue_value(buf[col * FT_EPI_PITCH + px], k, chan_s);
            }
          }
#endif
          __syncwarp();
          if (lane == 0) ft_mbar_arrive(e_empty + 8 * c);
        }
#endif
      }
#if FT_REDUCE
#if FT_EPI_WG == 2
      // the pair's two halves meet: the upper half hands its result to the lower
      if (col0 == 1) epi_red[ew * 64 + px] = red;
      asm volatile("bar.sync %0, 128;\n" ::"r"(4 + ew) : "memory");
      if (col0 == 0) red = ft_reduce_step(red, epi_red[ew * 64 + px]);
      asm volatile("bar.sync %0, 128;\n" ::"r"(4 + ew) : "memory");  // read before the next tile writes
      if (col0 == 0) {
#else
      (void)epi_red;
      {
#endif
        const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
        const long long pq = (long long)p * FT_Q + q;
        if (p < FT_P && q < FT_Q && !ft_plant_skips(n, pq))
          out[n * FT_PQ + pq] = ft_chain_post(ft_reduce_finish(red), 0, chan_s);
      }
#endif
    }
    return;
  }
#endif
  (void)epi_red;

  // ---- consumers ---------------------------------------------------------------------------------
  ft_setmaxnreg_inc<FT_REGS_C>();
  const int c = wg - 1;
  const int tid = (int)threadIdx.x - 128 * wg;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
  const int row0 = 16 * warp + g;  // rows row0, row0 + 8 of this warpgroup's 64
  // their pixels (the second one row below the first under FT_PAIR): where the accumulators go
  const int px0 = ft_mrow_px(row0), px1 = ft_mrow_px(row0 + 8);
  // halo offsets (before the tile's misalignment) of the two pixels this thread feeds to the
  // MMAs, with this thread's channel tq folded in
  int pixb[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int px = hf ? px1 : px0;
    pixb[hf] = tq * FT_CHS + ft_px_row(c, px) * FT_STRIDE_H * FT_HCP + ft_px_col(c, px) * FT_STRIDE_W;
  }
  const unsigned long long desc0 = ft_smem_desc(smem0);
  int stage = 0;
  unsigned phase = 0;
  int ci = 0;
  float acc[FT_BN / 2];
#if FT_PROMOTE
  float tot[FT_BN / 2];
#endif
#if FT_CROSS
  // A fragments of the last FT_AB taps (in flight in the MMAs), kept across chunks
  unsigned a[FT_AB][4][4];
#if FT_SPLIT
  unsigned as[FT_AB][4][4];  // the small parts
#endif
#endif
  // FT_AREUSE: the lower pixel's half of the last tap's fragment, copied as it was loaded
  unsigned keep[4][2];
#if FT_SPLIT
  unsigned keeps[4][2];
#endif
  int pend = 0;  // taps whose MMAs were issued and whose filter stage is not handed back yet
#if FT_EPI_WG
  int ei = 0;  // buffers handed over so far: the barriers' phase
#endif
  for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
    long long n;
    int tp0, tq0;
    ft_tile_coords(tile, n, tp0, tq0);
    const int iw0 = tq0 * FT_STRIDE_W - FT_PAD_W;
    const int mis = iw0 - (iw0 & -FT_VW);
    const int pix0 = pixb[0] + mis, pix1 = pixb[1] + mis;
#if FT_REDUCE && !FT_EPI_WG
    float red0 = FT_REDUCE_INIT(), red1 = FT_REDUCE_INIT();
#endif
    for (int nt = 0; nt < FT_NT; ++nt) {
#pragma unroll
      for (int i = 0; i < FT_BN / 2; ++i) acc[i] = 0.0f;
#if FT_PROMOTE
#pragma unroll
      for (int i = 0; i < FT_BN / 2; ++i) tot[i] = 0.0f;
#endif
      // unrolled where chunks follow each other without a drain: ptxas tracks the MMAs in
      // flight only in straight-line code (a loop back edge between them serializes them)
#pragma unroll ft_chunk_unroll
      for (int ch = 0; ch < FT_CHUNKS; ++ch, ++ci) {
        const int h = ci & 1;
        ft_mbar_wait(h_full + 8 * h, (ci >> 1) & 1);
        const float* const hv0 = halo_ptr + h * (FT_HALO_BYTES / 4) + pix0;
        const float* const hv1 = halo_ptr + h * (FT_HALO_BYTES / 4) + pix1;
#if !FT_CROSS
        unsigned a[FT_AB][4][4];  // every chunk drains the MMAs: the fragments live in it
#if FT_SPLIT
        unsigned as[FT_AB][4][4];
#endif
#endif
#pragma unroll
        for (int tap = 0; tap < FT_KTAPS; ++tap) {  // K tiles: one tap each, or FT_TPK taps
          const int r = ft_tap_r(tap);  // (FT_AREUSE: one tap per K tile, tap's filter row)
          const int ab = tap % FT_AB;
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
            // the K tile's columns 8 ks + tq (registers 0, 1) and 8 ks + 4 + tq (2, 3)
            const int o = ft_kcol_off(tap, 8 * ks), o4 = ft_kcol_off(tap, 8 * ks + 4);
            if (FT_AREUSE && r > 0) {
              // the upper pixel's input rows are the ones the lower pixel's were at tap (r - 1, s),
              // from copies of their own (the last tap's A registers are in flight in its MMAs:
              // the PTX ISA makes touching them before its wait undefined)
              a[ab][ks][0] = keep[ks][0];
              a[ab][ks][2] = keep[ks][1];
#if FT_SPLIT
              as[ab][ks][0] = keeps[ks][0];
              as[ab][ks][2] = keeps[ks][1];
#endif
            } else {
              a[ab][ks][0] = __float_as_uint(hv0[o]);
              a[ab][ks][2] = __float_as_uint(hv0[o4]);
#if FT_SPLIT
              ft_split(a[ab][ks][0], a[ab][ks][0], as[ab][ks][0]);
              ft_split(a[ab][ks][2], a[ab][ks][2], as[ab][ks][2]);
#endif
            }
            a[ab][ks][1] = __float_as_uint(hv1[o]);
            a[ab][ks][3] = __float_as_uint(hv1[o4]);
#if FT_SPLIT
            ft_split(a[ab][ks][1], a[ab][ks][1], as[ab][ks][1]);
            ft_split(a[ab][ks][3], a[ab][ks][3], as[ab][ks][3]);
#endif
            if (FT_AREUSE) {  // before this tap's fence: the next tap's upper half
              keep[ks][0] = a[ab][ks][1];
              keep[ks][1] = a[ab][ks][3];
#if FT_SPLIT
              keeps[ks][0] = as[ab][ks][1];
              keeps[ks][1] = as[ab][ks][3];
#endif
            }
          }
          ft_mbar_wait(b_full + 8 * stage, phase);
          // descriptor start address field is (addr >> 4): stage and 32-byte K steps add there
#if defined(FT_PLANT_STALE_STAGE)
          const int st_read = tap == FT_KTAPS - 1 ? (stage + FT_STAGES - 1) % FT_STAGES : stage;
          const unsigned long long db = desc0 + (unsigned)((st_read * FT_STAGE_B_BYTES) >> 4);
#else
          const unsigned long long db = desc0 + (unsigned)((stage * FT_STAGE_B_BYTES) >> 4);
#endif
          ft_wgmma_fence();
#if FT_SPLIT
          // the small terms first, so the big*big products add to what they already hold
          const unsigned long long dbs = db + (unsigned)(FT_B_BYTES >> 4);
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
#if !defined(FT_PLANT_SPLIT_DROP)
            ft_wgmma_rs<FT_BN>(acc, as[ab][ks], db + 2 * ks);
#endif
            ft_wgmma_rs<FT_BN>(acc, a[ab][ks], dbs + 2 * ks);
            ft_wgmma_rs<FT_BN>(acc, a[ab][ks], db + 2 * ks);
          }
#else
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) ft_wgmma_rs<FT_BN>(acc, a[ab][ks], db + 2 * ks);
#endif
          ft_wgmma_commit();
#if defined(FT_PLANT_STALE_STAGE)
          if (tap == FT_KTAPS - 1) ft_wgmma_wait<0>();  // the stale stage's read completes before it is released
#endif
          if (tap == FT_KTAPS - 1) {
            // A goes to the MMAs from registers: the halo buffer is free once the last tap's
            // MMAs are issued (their fragments loaded), without waiting for them to finish
            __syncwarp();
            if (lane == 0) ft_mbar_arrive(h_empty + 8 * h);
          }
          ft_wgmma_wait<FT_AB - 1>();
          // the MMAs of FT_AB - 1 taps ago are done: their filter stage goes back to the producer
          if (++pend > FT_AB - 1) {
            if (lane == 0) ft_mbar_arrive(b_empty + 8 * ((stage + FT_STAGES - (FT_AB - 1)) % FT_STAGES));
            --pend;
          }
          if (++stage == FT_STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
        if (!FT_CROSS || ch == FT_CHUNKS - 1) {
          // drain: the accumulators are final (the epilogue follows), or the next chunk's first
          // taps would reuse A registers still in flight (FT_CROSS 0)
          ft_wgmma_wait<0>();
          if (lane == 0)
            for (int j = pend; j >= 1; --j) ft_mbar_arrive(b_empty + 8 * ((stage + FT_STAGES - j) % FT_STAGES));
          pend = 0;
#if FT_PROMOTE
#pragma unroll
          for (int i = 0; i < FT_BN / 2; ++i) {
            tot[i] += acc[i];
            acc[i] = 0.0f;
          }
#endif
        }
      }
#if FT_PROMOTE
#pragma unroll
      for (int i = 0; i < FT_BN / 2; ++i) acc[i] = tot[i];
#endif

      // ---- epilogue for column tile nt ----
#if FT_EPI_WG
      // hand the raw accumulators over once the epilogue warpgroup has emptied the buffer
      ft_mbar_wait(e_empty + 8 * c, (ei & 1) ^ 1);
      {
        float* const buf = epi_all + c * FT_BN * FT_EPI_PITCH;
#pragma unroll
        for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int col = 8 * i + 2 * tq + hh;
            buf[col * FT_EPI_PITCH + px0] = acc[4 * i + hh];
            buf[col * FT_EPI_PITCH + px1] = acc[4 * i + 2 + hh];
          }
        }
      }
      __syncwarp();
      if (lane == 0) ft_mbar_arrive(e_full + 8 * c);
      ++ei;
#elif FT_REDUCE
#pragma unroll
      for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int k = nt * FT_BN + 8 * i + 2 * tq + hh;
          if ((FT_K % FT_BN == 0 || k < FT_K) && !ft_plant_skips_channel(k) && FT_PLANT_TILE_IN(nt)) {
            red0 = ft_reduce_step(red0, ft_epilogue_value(acc[4 * i + hh], k, chan_s));
            red1 = ft_reduce_step(red1, ft_epilogue_value(acc[4 * i + 2 + hh], k, chan_s));
          }
        }
      }
#elif FT_OUT_NHWC
      float* const epi = epi_all + c * 64 * FT_EPI_NHWC_PITCH;
#pragma unroll
      for (int cb = 0; cb < FT_BN / 32; ++cb) {
#pragma unroll
        for (int i = 4 * cb; i < 4 * cb + 4; ++i) {
          // this thread's two columns (a pair of channels) of its pixels px0 and px1
          const int col = 8 * i + 2 * tq;
          const int k = nt * FT_BN + col;
          const bool k0 = FT_K % FT_BN == 0 || k < FT_K, k1 = FT_K % FT_BN == 0 || k + 1 < FT_K;
          float* const at = epi + px0 * FT_EPI_NHWC_PITCH + (col - 32 * cb);
          float* const at1 = epi + px1 * FT_EPI_NHWC_PITCH + (col - 32 * cb);
          *reinterpret_cast<float2*>(at) = make_float2(k0 ? ft_epilogue_value(acc[4 * i], k, chan_s) : 0.f,
                                                       k1 ? ft_epilogue_value(acc[4 * i + 1], k + 1, chan_s) : 0.f);
          *reinterpret_cast<float2*>(at1) =
              make_float2(k0 ? ft_epilogue_value(acc[4 * i + 2], k, chan_s) : 0.f,
                          k1 ? ft_epilogue_value(acc[4 * i + 3], k + 1, chan_s) : 0.f);
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
        // 64 pixels x 32 channels as 512 16-byte words, 4 per thread: a quarter-warp stores the
        // 128 contiguous bytes of one pixel's 32 channels
#pragma unroll
        for (int it = 0; it < 4; ++it) {
          const int idx = 128 * it + tid;
          const int px = idx >> 3, c4 = 4 * (idx & 7);
          const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
          const long long pq = (long long)p * FT_Q + q;
          const int k = nt * FT_BN + 32 * cb + c4;
          if (p < FT_P && q < FT_Q && (FT_K % FT_BN == 0 || k < FT_K) && !ft_plant_skips(n, pq)) {
            const float4 v = *reinterpret_cast<const float4*>(epi + px * FT_EPI_NHWC_PITCH + c4);
            float* const dst = out + ((long long)n * FT_PQ + pq) * FT_K + k;
#if FT_K % 4 == 0
            *reinterpret_cast<float4*>(dst) = v;  // k < K and K % 4 == 0: all four, 16-byte aligned
#else
            dst[0] = v.x;
            if (k + 1 < FT_K) dst[1] = v.y;
            if (k + 2 < FT_K) dst[2] = v.z;
            if (k + 3 < FT_K) dst[3] = v.w;
#endif
          }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
      }
#else
      float* const epi = epi_all + c * 32 * FT_EPI_PITCH;
#pragma unroll
      for (int cb = 0; cb < FT_BN / 32; ++cb) {
#pragma unroll
        for (int i = 4 * cb; i < 4 * cb + 4; ++i) {
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int col = 8 * i + 2 * tq + hh;
            const int k = nt * FT_BN + col;
            if (FT_K % FT_BN == 0 || k < FT_K) {
              epi[(col - 32 * cb) * FT_EPI_PITCH + px0] = ft_epilogue_value(acc[4 * i + hh], k, chan_s);
              epi[(col - 32 * cb) * FT_EPI_PITCH + px1] = ft_epilogue_value(acc[4 * i + 2 + hh], k, chan_s);
            }
          }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
        {
          // a thread stores one pixel of 16 channels; a warp 32 consecutive pixels of a channel
          const int px = tid & 63;
          const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
          const long long pq = (long long)p * FT_Q + q;
          if (p < FT_P && q < FT_Q && !ft_plant_skips(n, pq)) {
            float* const dst = out + n * FT_K * FT_PQ + pq;
#pragma unroll 4
            for (int i = 0; i < 16; ++i) {
              const int chn = 2 * i + (tid >> 6);
              const int k = nt * FT_BN + 32 * cb + chn;
              if (FT_K % FT_BN == 0 || k < FT_K) dst[(long long)k * FT_PQ] = epi[chn * FT_EPI_PITCH + px];
            }
          }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
      }
#endif
    }
#if FT_REDUCE && !FT_EPI_WG
    // The four lanes of a quad hold the other columns of the same two rows.
#pragma unroll
    for (int off = 1; off < 4; off *= 2) {
      red0 = ft_reduce_step(red0, __shfl_xor_sync(0xffffffffu, red0, off));
      red1 = ft_reduce_step(red1, __shfl_xor_sync(0xffffffffu, red1, off));
    }
    if (tq == 0) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int px = hf ? px1 : px0;
        const int p = tp0 + ft_px_row(c, px), q = tq0 + ft_px_col(c, px);
        const long long pq = (long long)p * FT_Q + q;
        if (p < FT_P && q < FT_Q && !ft_plant_skips(n, pq))
          out[n * FT_PQ + pq] = ft_chain_post(ft_reduce_finish(hf ? red1 : red0), 0, chan_s);
      }
    }
#endif
  }
  (void)epi_all;
}
