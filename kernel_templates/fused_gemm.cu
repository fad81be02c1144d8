// fusetune: the fused GEMM (candidate `fused-gemm`): nn.Linear's y = x W^T (+ b) on TF32 tensor
// cores, or 3xTF32 for strict fp32, with the chain-form epilogue applied to the accumulators; only
// the problem's output leaves the SM.
//
// GEMM: x (M, K) and W (N, K) row-major as nn.Linear holds them: both operands K-major, the form
// wgmma reads TF32 in. Kernels:
//   ft_fused_gemm_pack     (untimed: W is a parameter) W -> wpack: per column tile nt and K tile kt
//                          one FT_BN x 32 block in the 128-byte swizzle wgmma reads, rounded to
//                          TF32 (3xTF32: the block of big parts, then the block of remainders),
//                          zero-padded past N and K. One bulk copy moves a stage's block.
//   ft_fused_gemm          the GEMM and the epilogue.
//   ft_fused_gemm_combine  (a reduction over features with FT_CSPLIT > 1) the partials -> out.
// The reduction: min/max/sum/mean through the rendered ft_reduce_*, logsumexp (FT_REDUCE_LSE)
// through ft_lse.cuh's one-pass shift and sum.
// (The bias and the per-feature parameters reach `chan` as [bias][param 0]..., N floats each,
// through an untimed kernel codegen writes: its argument list depends on the problem.)
//
// Block: warpgroup 0 produces: its 128 threads copy the x tile (FT_BM rows x 32 values) of each K
// tile with 16-byte cp.async into the 128-byte swizzle, and thread 0 the W block with one bulk copy,
// FT_STAGES stages in flight. Warpgroups 1 .. FT_BM/64 consume: warpgroup c owns rows 64c .. 64c+63
// and all FT_BN columns. A consumer reads its A fragments from shared memory, rounds (3xTF32:
// splits) them in registers and issues wgmma in the RS form: x is never rounded in shared memory,
// which would cost a second pass over every tile. A fragments are double-buffered by K-tile parity,
// so the registers of the MMAs in flight are never written before their wait (the PTX ISA leaves
// that undefined; this is how v13 of the fused conv went wrong).
//
// Grid: without a reduction one block per FT_BM x FT_BN output tile, FT_GROUP_M row tiles at a time
// (neighbouring blocks share rows of x and blocks of W in L2). With a reduction over the features
// (the chain form's `reduce_*(1)`) block (row tile, column split) loops over its share of the
// column tiles, bias + chain on each accumulator, and reduces in registers and across the four
// lanes of a row; with FT_CSPLIT > 1 its partial goes to part[split][m] and ft_fused_gemm_combine
// finishes the rows (M / FT_BM row tiles alone would leave most SMs idle at M = 1024).
//
// Launch: grid.x = row-major tiles (or FT_MT with grid.y = FT_CSPLIT), block.x = FT_THREADS,
// dynamic shared memory FT_SMEM_BYTES (>= FT_SMEM_NEEDED, checked). Needs sm_90a.
#ifndef FT_GENERATED
#define FT_GM 300
#define FT_GK 200
#define FT_GN 190
#define FT_K FT_GN
#define FT_BM 128
#define FT_BN 128
#define FT_STAGES 4
#define FT_SPLIT 1
#define FT_REDUCE 1
#define FT_CSPLIT 2
#define FT_GROUP_M 8
#define FT_B_KN 0
#define FT_REDUCE_LSE 0
#define FT_HAS_BIAS 1
#define FT_NUM_PARAMS 1
#define FT_CHAN_FLOATS (2 * FT_GN)
#define FT_SMEM_BYTES (1024 + FT_STAGES * (FT_BM * 128 + FT_BN * 128 * (1 + FT_SPLIT)) + 24 * FT_STAGES)
#include "ft_common.cuh"
#include "ft_wgmma.cuh"
#include "ft_tf32.cuh"
#include "ft_lse.cuh"
__device__ __forceinline__ float ft_chain_pre(float v, int k, const float* __restrict__ chan) {
  return v * chan[FT_GN + k];
}
__device__ __forceinline__ float ft_chain_post(float v, int k, const float* __restrict__ chan) { return v * 0.5f; }
__device__ __forceinline__ float ft_chain(float v, int k, const float* __restrict__ chan) {
  return ft_silu(v) * chan[FT_GN + k];
}
__device__ __forceinline__ float ft_reduce_init() { return -FT_INF; }
__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return ft_max(acc, v); }
__device__ __forceinline__ float ft_reduce_finish(float acc) { return acc; }
#endif

#if FT_STAGES < 3
#error "fused_gemm.cu: FT_STAGES must be at least 3 (the producer publishes FT_STAGES - 2 stages late)"
#endif
#if FT_BM != 128 || FT_BN % 64 != 0 || FT_BN > 256
#error "fused_gemm.cu: FT_BM must be 128, FT_BN one of 64, 128, 192, 256"
#endif
#if FT_GK % 4 != 0
#error "fused_gemm.cu: K must be a multiple of 4 (16-byte copies of x rows)"
#endif

#define FT_KT ((FT_GK + 31) / 32)                  // K tiles
#define FT_KG_PAD (FT_KT * 32)                     // packed W row length
#define FT_NT ((FT_GN + FT_BN - 1) / FT_BN)        // column tiles
#define FT_KN_PAD (FT_NT * FT_BN)                  // packed W rows
#define FT_MT ((FT_GM + FT_BM - 1) / FT_BM)        // row tiles
#define FT_CONSUMERS (FT_BM / 64)
#define FT_THREADS (128 * (1 + FT_CONSUMERS))
#define FT_A_BYTES (FT_BM * 128)
#define FT_B_BYTES (FT_BN * 128)
#define FT_STAGE_B_BYTES (FT_B_BYTES * (1 + FT_SPLIT))  // a stage's W block (and its remainders)
#define FT_STAGE_B_FLOATS (FT_STAGE_B_BYTES / 4)
#define FT_STAGE_BYTES (FT_A_BYTES + FT_STAGE_B_BYTES)
#define FT_SMEM_NEEDED (1024 + FT_STAGES * FT_STAGE_BYTES + 24 * FT_STAGES)
// The producer publishes stage it once its copies of it have landed, FT_LAG stages later, so later
// copies stay in flight while it waits; FT_STAGES - 2 is the most that cannot deadlock (the
// consumers free stage it - FT_STAGES only after they have started on stage it - FT_STAGES + 1).
#define FT_LAG (FT_STAGES - 2)
#if !FT_REDUCE
#undef FT_CSPLIT
#define FT_CSPLIT 1
#endif
#if FT_CSPLIT > FT_NT
#error "fused_gemm.cu: more column splits than column tiles"
#endif

// Registers: the producer gives its share to the consumers (BN/2 accumulators, two K tiles of A
// fragments, their remainders under 3xTF32, and the epilogue).
// 3xTF32: pairs of K tiles (64 of K) between promotions of the tensor cores' partial sums (below).
#ifndef FT_PROMOTE_PAIRS
#define FT_PROMOTE_PAIRS 4
#endif
#define FT_REGS_P 56
#define FT_REGS_C 224
static_assert(128 * FT_REGS_P + 128 * FT_CONSUMERS * FT_REGS_C <= FT_THREADS * (65536 / FT_THREADS / 8 * 8),
              "setmaxnreg: register file over-committed");

// Test-only planted bugs (tests/gpu_model_steps_test.cpp defines them in a copy of a variant's
// source; real variants define none and compile to the same code as without these lines):
//   FT_PLANT_SKIP_CHUNK     the pack zeroes W's last 32-wide K tile (a skipped chunk)
//   FT_PLANT_TRUNCATE_TF32  x and W truncated to TF32 (toward zero) instead of rounded to nearest
//   FT_PLANT_STALE_STAGE    a block's last K tile reads the W block of the stage before (retired
//                           by a full wait first: deterministic)
//   FT_PLANT_DROP_LAST_TILE the last column tile is left out of the reduction (ft_common.cuh)
#if defined(FT_PLANT_TRUNCATE_TF32)
#define FT_GEMM_TF32(u) ((u) & 0xffffe000u)
#else
#define FT_GEMM_TF32(u) ft_tf32_bits(u)
#endif

// 3xTF32: a value's big part (TF32, to nearest) and its small part (the remainder, exact in fp32,
// rounded to TF32), as the fused conv's halo design splits (an infinity or NaN has no small part).
__device__ __forceinline__ void ft_gemm_split(unsigned u, unsigned& big, unsigned& small) {
  big = FT_GEMM_TF32(u);
  const float d = __uint_as_float(u) - __uint_as_float(big);
  small = FT_GEMM_TF32((__float_as_uint(d) & 0x7f800000u) != 0x7f800000u ? __float_as_uint(d) : 0u);
}

// W (N, K) (FT_B_KN: a matmul's B (K, N), transposed here) -> wpack [nt][kt][part][FT_BN rows][32],
// each block in the 128-byte swizzle
// (ft_sw128: 16-byte chunk c of row r at chunk c ^ (r % 8)).
extern "C" __global__ void __launch_bounds__(256) ft_fused_gemm_pack(const float* __restrict__ w,
                                                                     float* __restrict__ wpack) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)FT_KN_PAD * FT_KG_PAD * (1 + FT_SPLIT)) return;
  const long long blk = i / FT_STAGE_B_FLOATS;
  const int within = (int)(i - blk * FT_STAGE_B_FLOATS);
  const int part = within / (FT_BN * 32);  // 0: big (or the only), 1: small
  const int e = within - part * (FT_BN * 32);
  const int r = e >> 5;
  const int kk = ((((e & 31) >> 2) ^ (r & 7)) << 2) | (e & 3);  // the logical column of physical slot e
  const long long n = (blk / FT_KT) * FT_BN + r;
  const long long k = (blk % FT_KT) * 32 + kk;
#if defined(FT_PLANT_SKIP_CHUNK)
  if (blk % FT_KT == FT_KT - 1) {
    wpack[i] = 0.0f;
    return;
  }
#endif
#if FT_B_KN
  const float v = (n < FT_GN && k < FT_GK) ? w[k * FT_GN + n] : 0.0f;  // a matmul's B (K, N)
#else
  const float v = (n < FT_GN && k < FT_GK) ? w[n * FT_GK + k] : 0.0f;
#endif
#if FT_SPLIT
  unsigned big, small;
  ft_gemm_split(__float_as_uint(v), big, small);
  wpack[i] = __uint_as_float(part == 0 ? big : small);
#else
  wpack[i] = __uint_as_float(FT_GEMM_TF32(__float_as_uint(v)));
#endif
}

// The block's output tiles: row tile mt and column tiles [nt0, nt1).
struct ft_gemm_tiles {
  int mt, nt0, nt1;
};
__device__ __forceinline__ ft_gemm_tiles ft_block_tiles() {
  ft_gemm_tiles t;
#if FT_REDUCE
  t.mt = (int)blockIdx.x;
  t.nt0 = (int)blockIdx.y * FT_NT / FT_CSPLIT;
  t.nt1 = ((int)blockIdx.y + 1) * FT_NT / FT_CSPLIT;
#else
  // FT_GROUP_M row tiles side by side, their column tiles in turn
  const int per_group = FT_GROUP_M * FT_NT;
  const int b = (int)blockIdx.x;
  const int first = b / per_group * FT_GROUP_M;
  const int rows = FT_MT - first < FT_GROUP_M ? FT_MT - first : FT_GROUP_M;
  const int in = b - b / per_group * per_group;
  t.mt = first + in % rows;
  t.nt0 = in / rows;
  t.nt1 = t.nt0 + 1;
#endif
  return t;
}

// Bias and the pre-reduction (or whole) chain on one accumulator of output feature k.
__device__ __forceinline__ float ft_epilogue_value(float v, int k, const float* __restrict__ chan) {
#if FT_HAS_BIAS
  v += chan[FT_BIAS_K(k)];
#endif
#if FT_REDUCE
  return FT_PLANT_CHAIN(ft_chain_pre, v, FT_CHAN_K(k), chan);
#else
  return FT_PLANT_CHAIN(ft_chain, v, FT_CHAN_K(k), chan);
#endif
}

#if FT_REDUCE
// A row's reduction state: a float (ft_reduce_*, rendered) or, for logsumexp, ft_lse.cuh's shift and sum.
#if FT_REDUCE_LSE
typedef ft_lse ft_row_t;
#define FT_ROW_FLOATS 2
__device__ __forceinline__ ft_row_t ft_row_init() { return ft_lse_init(); }
__device__ __forceinline__ void ft_row_add(ft_row_t& r, float v) { ft_lse_add(r, v); }
__device__ __forceinline__ ft_row_t ft_row_join(ft_row_t a, ft_row_t b) { return ft_lse_join(a, b); }
__device__ __forceinline__ float ft_row_finish(ft_row_t r) { return ft_lse_finish(r); }
__device__ __forceinline__ ft_row_t ft_row_shfl_xor(ft_row_t r, int off) {
  ft_row_t o;
  o.m = __shfl_xor_sync(0xffffffffu, r.m, off);
  o.s = __shfl_xor_sync(0xffffffffu, r.s, off);
  return o;
}
__device__ __forceinline__ void ft_row_store(float* part, long long m, ft_row_t r) {
  part[m] = r.m;
  part[FT_GM + m] = r.s;
}
__device__ __forceinline__ ft_row_t ft_row_load(const float* part, long long m) {
  ft_row_t r;
  r.m = part[m];
  r.s = part[FT_GM + m];
  return r;
}
#else
typedef float ft_row_t;
#define FT_ROW_FLOATS 1
__device__ __forceinline__ ft_row_t ft_row_init() { return FT_REDUCE_INIT(); }
__device__ __forceinline__ void ft_row_add(ft_row_t& r, float v) { r = ft_reduce_step(r, v); }
__device__ __forceinline__ ft_row_t ft_row_join(ft_row_t a, ft_row_t b) { return ft_reduce_step(a, b); }
__device__ __forceinline__ float ft_row_finish(ft_row_t r) { return ft_reduce_finish(r); }
__device__ __forceinline__ ft_row_t ft_row_shfl_xor(ft_row_t r, int off) { return __shfl_xor_sync(0xffffffffu, r, off); }
__device__ __forceinline__ void ft_row_store(float* part, long long m, ft_row_t r) { part[m] = r; }
__device__ __forceinline__ ft_row_t ft_row_load(const float* part, long long m) { return part[m]; }
#endif
#endif

// One K tile of a consumer: A fragments of buffer BUF from the stage's x tile, rounded (split), then
// the tile's MMAs. a_tile: the generic address of this warpgroup's first fragment element.
template <int BUF>
__device__ __forceinline__ void ft_gemm_k_tile(float* acc, unsigned (&a)[2][4][4], unsigned (&as)[2][4][4],
                                               const float* a_tile, int g, unsigned long long db) {
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      // a[j]: row (j & 1) * 8 below the thread's first, column 8 ks + tq + 4 (j >> 1) (ft_wgmma_rs)
      const int chunk = ((2 * ks + (j >> 1)) ^ g);
      const unsigned u = __float_as_uint(a_tile[(j & 1) * 256 + chunk * 4]);
#if FT_SPLIT
      ft_gemm_split(u, a[BUF][ks][j], as[BUF][ks][j]);
#else
      a[BUF][ks][j] = FT_GEMM_TF32(u);
#endif
    }
  }
  ft_wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 4; ++ks) {
#if FT_SPLIT
    // the small terms first, so the big*big products add to what they already hold
    ft_wgmma_rs<FT_BN>(acc, as[BUF][ks], db + 2 * ks);
    ft_wgmma_rs<FT_BN>(acc, a[BUF][ks], db + (unsigned)(FT_B_BYTES >> 4) + 2 * ks);
#endif
    ft_wgmma_rs<FT_BN>(acc, a[BUF][ks], db + 2 * ks);
  }
  ft_wgmma_commit();
  (void)as;
}

extern "C" __global__ void __launch_bounds__(FT_THREADS, 1)
    ft_fused_gemm(const float* __restrict__ x, const float* __restrict__ wpack, float* __restrict__ out,
                  const float* __restrict__ chan) {
  extern __shared__ __align__(1024) unsigned char ft_smem_raw[];
  unsigned dyn_bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn_bytes));
  if (dyn_bytes < FT_SMEM_NEEDED) __trap();  // launched with less than the layout below needs

  // [pad to 1024][stage 0: A | B (| B small)] ... [stage S-1][a_full x S][b_full x S][empty x S]
  const unsigned raw = (unsigned)__cvta_generic_to_shared(ft_smem_raw);
  const unsigned smem0 = (raw + 1023u) & ~1023u;
  const unsigned char* const base = ft_smem_raw + (smem0 - raw);
  const unsigned a_full = smem0 + FT_STAGES * FT_STAGE_BYTES;
  const unsigned b_full = a_full + 8 * FT_STAGES;
  const unsigned empty = b_full + 8 * FT_STAGES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < FT_STAGES; ++s) {
      ft_mbar_init(a_full + 8 * s, 128);              // every producer thread, once its copies landed
      ft_mbar_init(b_full + 8 * s, 1);                // the bulk copy's transaction count
      ft_mbar_init(empty + 8 * s, 4 * FT_CONSUMERS);  // one arrival per consumer warp
    }
    ft_fence_mbar_init();  // the bulk copies (async proxy) signal these barriers
  }
  __syncthreads();

  const ft_gemm_tiles tiles = ft_block_tiles();
  const long long m0 = (long long)tiles.mt * FT_BM;
  const int wg = (int)threadIdx.x / 128;
  if (wg == 0) {
    // ---- producer ---------------------------------------------------------------------------
    ft_setmaxnreg_dec<FT_REGS_P>();
    const int t = (int)threadIdx.x;
    // Thread t copies 16-byte chunk t % 8 of rows t / 8 + 16u (u < FT_BM / 16): a warp covers four
    // whole 128-byte rows per copy, and every address is a base plus compile-time steps.
    const int ch = t & 7, r0 = t >> 3;
    const float* const src0 = x + (m0 + r0) * FT_GK + ch * 4;
    const unsigned dst0 = r0 * 128 + (((ch ^ r0) & 7) << 4);
    unsigned rows_ok = 0;  // bit u: row r0 + 16u is inside x
#pragma unroll
    for (int u = 0; u < FT_BM / 16; ++u) rows_ok |= (m0 + r0 + 16 * u < FT_GM ? 1u : 0u) << u;
    int it = 0;
    for (int nt = tiles.nt0; nt < tiles.nt1; ++nt) {
      // not unrolled: on short K loops ptxas would unroll them whole and spill the producer's 56 registers
#pragma unroll 1
      for (int kt = 0; kt < FT_KT; ++kt, ++it) {
        const int stage = it % FT_STAGES;
        ft_mbar_wait(empty + 8 * stage, ((it / FT_STAGES) & 1) ^ 1);
        const unsigned a_s = smem0 + stage * FT_STAGE_BYTES;
        const bool k_ok = FT_GK % 32 == 0 || kt * 32 + ch * 4 < FT_GK;
#pragma unroll
        for (int u = 0; u < FT_BM / 16; ++u) {
          const bool ok = k_ok && ((rows_ok >> u) & 1u);
          ft_cp_async_zfill<16>(a_s + dst0 + u * 2048, ok ? src0 + (long long)u * 16 * FT_GK + kt * 32 : x, ok);
        }
        ft_cp_async_commit();
        if (t == 0) {
          ft_mbar_expect_tx(b_full + 8 * stage, FT_STAGE_B_BYTES);
          ft_bulk_g2s(a_s + FT_A_BYTES, wpack + ((long long)nt * FT_KT + kt) * FT_STAGE_B_FLOATS, FT_STAGE_B_BYTES,
                      b_full + 8 * stage);
        }
        if (it >= FT_LAG) {
          ft_cp_async_wait<FT_LAG>();  // this thread's copies of stage it - FT_LAG have landed
          ft_mbar_arrive(a_full + 8 * ((it - FT_LAG) % FT_STAGES));
        }
      }
    }
    ft_cp_async_wait<0>();
    for (int pub = it > FT_LAG ? it - FT_LAG : 0; pub < it; ++pub) ft_mbar_arrive(a_full + 8 * (pub % FT_STAGES));
    return;
  }

  // ---- consumer warpgroup c = wg - 1: tile rows 64c .. 64c+63 ---------------------------------
  ft_setmaxnreg_inc<FT_REGS_C>();
  const int c = wg - 1;
  const int tid = (int)threadIdx.x - 128 * wg;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
  const int row0 = 16 * warp + g;  // this thread's accumulator rows: row0 and row0 + 8
  // this thread's first A fragment element in a stage's x tile (row 64c + row0, column tq; the
  // swizzled chunk is added per fragment)
  const float* const a_frag0 = reinterpret_cast<const float*>(base) + (64 * c + row0) * 32 + tq;
  const unsigned long long desc0 = ft_smem_desc(smem0 + FT_A_BYTES);
  unsigned a[2][4][4], as[2][4][4];
#if FT_REDUCE
  ft_row_t red0 = ft_row_init(), red1 = ft_row_init();
#endif
  float acc[FT_BN / 2];
#if FT_SPLIT
  // 3xTF32 promotes: the tensor cores' fp32 accumulation truncates each step's sum (an error
  // of one sign, a few ulps of the running sum a step: call 129 saw 1.6-4.8x KernelBench's 1e-4
  // on a K = 1024 GEMM's row sums, 3.4x on a K = 2304 conv), so every FT_PROMOTE_PAIRS pairs of
  // K tiles the MMAs drain and their partial sum joins `tot` by a correctly rounded add:
  // the truncation then acts on a running sum FT_PROMOTE_PAIRS * 64 / K as large.
  float tot[FT_BN / 2];
#endif
  int it = 0;
  for (int nt = tiles.nt0; nt < tiles.nt1; ++nt) {
#pragma unroll
    for (int i = 0; i < FT_BN / 2; ++i) acc[i] = 0.0f;
#if FT_SPLIT
#pragma unroll
    for (int i = 0; i < FT_BN / 2; ++i) tot[i] = 0.0f;
#endif
    // K tiles in pairs, so each tile's fragment buffer is a compile-time index
    for (int kt = 0; kt < FT_KT; kt += 2) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (h == 1 && kt + 1 >= FT_KT) break;
        const int j = it + h;
        const int stage = j % FT_STAGES;
        const unsigned parity = (j / FT_STAGES) & 1;
        ft_mbar_wait(a_full + 8 * stage, parity);
        ft_mbar_wait(b_full + 8 * stage, parity);
        const float* const a_tile = a_frag0 + stage * (FT_STAGE_BYTES / 4);
#if defined(FT_PLANT_STALE_STAGE)
        if (kt + h == FT_KT - 1 && kt + h > 0) ft_wgmma_wait<0>();  // the stale stage's MMAs are done
        const int st_b = kt + h == FT_KT - 1 && kt + h > 0 ? (j - 1) % FT_STAGES : stage;
        const unsigned long long db = desc0 + (unsigned)((st_b * FT_STAGE_BYTES) >> 4);
#else
        const unsigned long long db = desc0 + (unsigned)((stage * FT_STAGE_BYTES) >> 4);
#endif
        if (h == 0)
          ft_gemm_k_tile<0>(acc, a, as, a_tile, g, db);
        else
          ft_gemm_k_tile<1>(acc, a, as, a_tile, g, db);
#if defined(FT_PLANT_STALE_STAGE)
        if (kt + h == FT_KT - 1) ft_wgmma_wait<0>();  // the stale stage's read completes before it is released
#endif
        // the previous K tile's MMAs are done once at most this one's group is pending
        ft_wgmma_wait<1>();
        if (kt + h > 0 && lane == 0) ft_mbar_arrive(empty + 8 * ((j - 1) % FT_STAGES));
      }
      it += kt + 1 < FT_KT ? 2 : 1;
#if FT_SPLIT
      if ((kt / 2 + 1) % FT_PROMOTE_PAIRS == 0 && kt + 2 < FT_KT) {
        ft_wgmma_wait<0>();  // this pair's MMAs are done: acc may be read and restarted
#pragma unroll
        for (int i = 0; i < FT_BN / 2; ++i) {
          tot[i] += acc[i];
          acc[i] = 0.0f;
        }
      }
#endif
    }
    ft_wgmma_wait<0>();
    if (lane == 0) ft_mbar_arrive(empty + 8 * ((it - 1) % FT_STAGES));
#if FT_SPLIT
#pragma unroll
    for (int i = 0; i < FT_BN / 2; ++i) acc[i] += tot[i];
#endif

#if FT_REDUCE
#pragma unroll
    for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = nt * FT_BN + 8 * i + 2 * tq + h;
        if (k < FT_GN && !ft_plant_skips_channel(k) && FT_PLANT_TILE_IN(nt)) {
          ft_row_add(red0, ft_epilogue_value(acc[4 * i + h], k, chan));
          ft_row_add(red1, ft_epilogue_value(acc[4 * i + 2 + h], k, chan));
        }
      }
    }
#else
    const long long ma = m0 + 64 * c + row0, mb = ma + 8;
    // Straight from the accumulators: a warp's store covers 32 consecutive bytes of each of 8 rows,
    // whole sectors (the output is one pass; staging it through shared memory saves nothing).
#pragma unroll
    for (int i = 0; i < FT_BN / 8; ++i) {
      const int k = nt * FT_BN + 8 * i + 2 * tq;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const long long m = r ? mb : ma;
        if (m >= FT_GM || ft_plant_skips(m, 0)) continue;
        const float v0 = ft_epilogue_value(acc[4 * i + 2 * r], k, chan);
#if FT_GN % 2 == 0
        if (k < FT_GN) {
          const float v1 = ft_epilogue_value(acc[4 * i + 2 * r + 1], k + 1, chan);
          *reinterpret_cast<float2*>(out + m * FT_GN + k) = make_float2(v0, v1);
        }
#else
        if (k < FT_GN) out[m * FT_GN + k] = v0;
        if (k + 1 < FT_GN) out[m * FT_GN + k + 1] = ft_epilogue_value(acc[4 * i + 2 * r + 1], k + 1, chan);
#endif
      }
    }
#endif
  }
  (void)as;

#if FT_REDUCE
  // The four lanes of a quad hold the other columns of the same two rows.
#pragma unroll
  for (int off = 1; off < 4; off *= 2) {
    red0 = ft_row_join(red0, ft_row_shfl_xor(red0, off));
    red1 = ft_row_join(red1, ft_row_shfl_xor(red1, off));
  }
  if (tq == 0) {
    const long long ma = m0 + 64 * c + row0, mb = ma + 8;
#if FT_CSPLIT > 1
    // finished by ft_fused_gemm_combine
    float* const part = out + (long long)blockIdx.y * FT_ROW_FLOATS * FT_GM;
    if (ma < FT_GM) ft_row_store(part, ma, red0);
    if (mb < FT_GM) ft_row_store(part, mb, red1);
#else
    if (ma < FT_GM && !ft_plant_skips(ma, 0)) out[ma] = ft_chain_post(ft_row_finish(red0), 0, chan);
    if (mb < FT_GM && !ft_plant_skips(mb, 0)) out[mb] = ft_chain_post(ft_row_finish(red1), 0, chan);
#endif
  }
#endif
}

#if FT_REDUCE && FT_CSPLIT > 1
// part (FT_CSPLIT, FT_ROW_FLOATS, M) -> out (M, 1): the column splits' partial reductions of each
// row joined, finished, and the chain after the reduction applied.
extern "C" __global__ void __launch_bounds__(256)
    ft_fused_gemm_combine(const float* __restrict__ part, float* __restrict__ out, const float* __restrict__ chan) {
  const long long m = (long long)blockIdx.x * 256 + threadIdx.x;
  if (m >= FT_GM || ft_plant_skips(m, 0)) return;
  ft_row_t acc = ft_row_load(part, m);
#pragma unroll
  for (int s = 1; s < FT_CSPLIT; ++s) acc = ft_row_join(acc, ft_row_load(part + (long long)s * FT_ROW_FLOATS * FT_GM, m));
  out[m] = ft_chain_post(ft_row_finish(acc), 0, chan);
}
#endif
