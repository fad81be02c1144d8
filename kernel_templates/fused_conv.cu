// fusetune: the fused implicit-GEMM convolution (candidate `fused-conv`). One kernel computes
// the conv on TF32 tensor cores and applies the whole epilogue to the accumulators; only the
// problem's output leaves the SM.
//
// GEMM view: M = N*P*Q output pixels, N = K output channels, K = C*R*S in (c, r, s) order, the
// order of PyTorch's weight (K, C, R, S), so the packed filters are its rows zero-padded to
// FT_KG_PAD (and to FT_KN_PAD rows), rounded to TF32 once by ft_fused_conv_pack (untimed:
// weights are parameters).
//
// Block: warpgroup 0 produces, warpgroups 1..FT_BM/64 consume (warp specialization).
//   producer  gathers the im2col tile of the input straight from x (NCHW or NHWC, padding and
//             pixels past the end zero-filled by cp.async), FT_BM rows x 32 values per stage,
//             and the filter tile FT_BN rows x 32; once its copies of a stage have landed it rounds
//             its input values to TF32 in place, fences them for the async proxy and arrives on
//             the stage's `full` barrier. FT_STAGES stages in flight.
//   consumer  warpgroup i owns rows 64i .. 64i+63 of the tile and all FT_BN columns; per stage it
//             issues four m64nBNk8 wgmmas (SS: both operands from 128-byte-swizzled shared
//             memory), keeps one stage's MMAs in flight, and releases a stage's `empty` barrier
//             when its MMAs have completed.
// The block loops over all ceil(K / FT_BN) column tiles for its FT_BM pixels, so a channel
// reduction is complete in the block: bias + ft_chain_pre on each accumulator, the reduction
// across a row's columns in registers, across the four lanes sharing a row by shuffles, and
// across column tiles in registers; then ft_chain_post and one store per pixel. Without a
// reduction each column tile is stored through shared memory, 32 channels at a time, so the
// NCHW output is written as runs of consecutive pixels (NHWC: runs of consecutive channels).
//
// Launch: grid.x = ceil(N*P*Q / FT_BM), block.x = 128 * (FT_BM/64 + 1), dynamic shared memory
// FT_SMEM_BYTES (>= FT_SMEM_NEEDED, checked). Needs sm_90a.
#ifndef FT_GENERATED
#define FT_BM 128
#define FT_BN 128
#define FT_STAGES 4
#define FT_BK 32
#define FT_REDUCE 1
#define FT_OUT_NHWC 0
#define FT_IN_NHWC 0
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
#define FT_SMEM_BYTES (1024 + FT_STAGES * (FT_BM + FT_BN) * FT_BK * 4 + (FT_BM / 64) * 32 * 68 * 4 + 16 * FT_STAGES + 64)
#include "ft_common.cuh"
#include "ft_wgmma.cuh"
__device__ __forceinline__ float ft_chain_pre(float v, int k, const float* __restrict__ chan) { return v * 2.0f; }
__device__ __forceinline__ float ft_chain_post(float v, int k, const float* __restrict__ chan) { return v; }
__device__ __forceinline__ float ft_reduce_init() { return FT_INF; }
__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return ft_min(acc, v); }
__device__ __forceinline__ float ft_reduce_finish(float acc) { return acc; }
#endif

#if FT_STAGES < 2
#error "fused_conv.cu: FT_STAGES must be at least 2"
#endif
#if FT_BK != 32
#error "fused_conv.cu: a K tile is one 128-byte swizzle row of 32 TF32 values"
#endif
#if FT_BM % 64 != 0 || FT_BN % 32 != 0 || FT_BN > 256
#error "fused_conv.cu: FT_BM must be a multiple of 64, FT_BN one of 32, 64, 128, 256"
#endif

// Measurement-only knobs for bench/fused_conv/harness.cu (fusetune never defines them; each
// makes the results wrong): FT_PROFILE_NO_A skips the input gathers, FT_PROFILE_NO_ROUND the
// TF32 rounding pass, FT_PROFILE_NO_MMA the wgmmas, to see where a version's time goes.
#define FT_M ((long long)FT_N * FT_PQ)                     // GEMM M: output pixels
#define FT_KG (FT_C * FT_RS)                                // GEMM K: filter taps x channels
#define FT_KT ((FT_KG + FT_BK - 1) / FT_BK)                 // K tiles
#define FT_KG_PAD (FT_KT * FT_BK)                           // packed filter row length
#define FT_NT ((FT_K + FT_BN - 1) / FT_BN)                  // column (output channel) tiles
#define FT_KN_PAD (FT_NT * FT_BN)                           // packed filter rows
#define FT_CONSUMERS (FT_BM / 64)
#ifndef FT_GATHER
#define FT_GATHER 0  // 0: cp.async gathers + a rounding pass; 1: through registers
#endif
#ifndef FT_PRODUCERS
#define FT_PRODUCERS 1  // producer warpgroups
#endif
#define FT_PTHREADS (128 * FT_PRODUCERS)
#define FT_PROWS (FT_BM / (32 * FT_PRODUCERS))  // A rows a producer thread gathers
#define FT_THREADS (128 * (FT_CONSUMERS + FT_PRODUCERS))
#define FT_A_BYTES (FT_BM * FT_BK * 4)
#define FT_B_BYTES (FT_BN * FT_BK * 4)
#define FT_STAGE_BYTES (FT_A_BYTES + FT_B_BYTES)
#define FT_EPI_PITCH 68  // 64 pixels + 4: the accumulator writes and the row reads hit 32 banks
#define FT_EPI_BYTES (FT_CONSUMERS * 32 * FT_EPI_PITCH * 4)
#define FT_SMEM_NEEDED (1024 + FT_STAGES * FT_STAGE_BYTES + FT_EPI_BYTES + 16 * FT_STAGES + 64)
// Stages the producer lets land before it publishes the oldest: copies of later stages stay
// in flight while it waits, and the consumers keep at least one stage of slack.
// FT_STAGES - 2 is the most that cannot deadlock: the consumers free stage it - FT_STAGES only
// after they have started on stage it - FT_STAGES + 1.
#define FT_LAG (FT_STAGES - 2)

// Filters (K, C, R, S) -> wpack (FT_KN_PAD, FT_KG_PAD), zero-padded, rounded to TF32.
extern "C" __global__ void __launch_bounds__(256) ft_fused_conv_pack(const float* __restrict__ w,
                                                                     float* __restrict__ wpack) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)FT_KN_PAD * FT_KG_PAD) return;
  const int n = (int)(i / FT_KG_PAD);
  const int kk = (int)(i % FT_KG_PAD);
#if defined(FT_PLANT_SKIP_CHUNK)
  // test-only planted bug: the last 32-wide K tile of the filters is zeroed (a skipped chunk)
  wpack[i] = (n < FT_K && kk < FT_KG && kk < (FT_KT - 1) * FT_BK) ? ft_tf32(w[(long long)n * FT_KG + kk]) : 0.0f;
#elif defined(FT_PLANT_WRONG_FILTER)
  // test-only planted bug: the last tap of every channel carries the filter of its first tap
  const int kw = kk % FT_RS == FT_RS - 1 ? kk - (FT_RS - 1) : kk;
  wpack[i] = (n < FT_K && kk < FT_KG) ? ft_tf32(w[(long long)n * FT_KG + kw]) : 0.0f;
#else
  wpack[i] = (n < FT_K && kk < FT_KG) ? ft_tf32(w[(long long)n * FT_KG + kk]) : 0.0f;
#endif
}

// Offset of filter tap kk (in (c, r, s) order) from a pixel's window origin, and its row and
// column displacement; kk past FT_KG gets a displacement no window accepts.
struct ft_tap {
  ft_index off;
  int dr, ds;
};
__device__ __forceinline__ ft_tap ft_tap_of(int kk) {
  const int c = kk / FT_RS;
  const int rs = kk - c * FT_RS;
  const int r = rs / FT_S;
  const int s = rs - r * FT_S;
  ft_tap t;
  t.dr = kk < FT_KG ? r * FT_DIL_H : (1 << 29);
  t.ds = s * FT_DIL_W;
#if FT_IN_NHWC
  t.off = ((ft_index)t.dr * FT_W + t.ds) * FT_C + c;
#else
  t.off = (ft_index)c * FT_HW + (ft_index)t.dr * FT_W + t.ds;
#endif
  return t;
}

// Rounds this producer thread's input values of K tile `it` to TF32 in place, makes them
// visible to wgmma (async proxy) and arrives on the stage's `full` barrier.
__device__ __forceinline__ void ft_publish(float* smem0_ptr, unsigned full0, int it) {
  const int t = (int)threadIdx.x;
  float* const a_p = smem0_ptr + (it % FT_STAGES) * (FT_STAGE_BYTES / 4);
  constexpr int kRows = FT_PROWS;
#ifndef FT_PROFILE_NO_ROUND
  // All loads first, then all stores: the loads pipeline instead of waiting one by one.
  float v[8][kRows];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < kRows; ++i) v[j][i] = a_p[ft_sw128((t >> 5) * 8 + ((t & 31) >> 2) + 8 * (FT_PTHREADS / 32) * i, (t & 3) + 4 * j) / 4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < kRows; ++i) a_p[ft_sw128((t >> 5) * 8 + ((t & 31) >> 2) + 8 * (FT_PTHREADS / 32) * i, (t & 3) + 4 * j) / 4] = ft_tf32(v[j][i]);
#endif
  ft_fence_proxy_async();
  ft_mbar_arrive(full0 + 8 * (it % FT_STAGES));
}

// The producer warpgroup (threads 0..127). Thread (warp w, lane l) gathers rows
// w*8 + l/4 + 32i of the A tile at K columns l%4 + 4j: a warp's 32 copies of one (i, j) land in
// 32 different banks, and its global reads are 8 neighbouring pixels x 4 neighbouring taps.
__device__ __forceinline__ void ft_produce(const float* __restrict__ x, const float* __restrict__ wpack,
                                           float* smem0_ptr, unsigned smem0, unsigned full0, unsigned empty0,
                                           long long m0) {
  constexpr int kRows = FT_PROWS;
  const int t = (int)threadIdx.x;
  const int lane = t & 31;
  const int rr = lane >> 2;
  const int kq = lane & 3;
  ft_index row_off[kRows];  // may be negative or huge for rows that take no tap; never dereferenced then
  int ih0[kRows], iw0[kRows];
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const long long m = m0 + (t >> 5) * 8 + rr + 8 * (FT_PTHREADS / 32) * i;
    const bool valid = m < FT_M;
    const long long mm = valid ? m : 0;
    const long long n = mm / FT_PQ;
    const ft_index pq = (ft_index)(mm - n * FT_PQ);  // past 2^31 pixels in one image: FT_INDEX_64
    const int p = (int)(pq / FT_Q);
    const int q = (int)(pq - (ft_index)p * FT_Q);
    ih0[i] = valid ? p * FT_STRIDE_H - FT_PAD_H : -(1 << 30);  // a row past the end takes no tap
    iw0[i] = q * FT_STRIDE_W - FT_PAD_W;
#if FT_IN_NHWC
    row_off[i] = valid ? (ft_index)n * FT_HW * FT_C + ((ft_index)ih0[i] * FT_W + iw0[i]) * FT_C : 0;
#else
    row_off[i] = valid ? (ft_index)n * FT_C * FT_HW + (ft_index)ih0[i] * FT_W + iw0[i] : 0;
#endif
  }

  constexpr int kIters = FT_NT * FT_KT;
  for (int it = 0; it < kIters; ++it) {
    const int nt = it / FT_KT;
    const int kt = it - nt * FT_KT;
    const int stage = it % FT_STAGES;
    ft_mbar_wait(empty0 + 8 * stage, ((it / FT_STAGES) & 1) ^ 1);
    const unsigned a_s = smem0 + stage * FT_STAGE_BYTES;
    const unsigned b_s = a_s + FT_A_BYTES;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const ft_tap tap = ft_tap_of(kt * FT_BK + kq + 4 * j);
#pragma unroll
      for (int i = 0; i < kRows; ++i) {
        const int ih = ih0[i] + tap.dr;
        const int iw = iw0[i] + tap.ds;
        const bool ok = (unsigned)ih < (unsigned)FT_PLANT_H && (unsigned)iw < (unsigned)FT_W;
        const float* src = ok ? x + row_off[i] + tap.off : x;
#ifndef FT_PROFILE_NO_A
        ft_cp_async4(a_s + ft_sw128((t >> 5) * 8 + rr + 8 * (FT_PTHREADS / 32) * i, kq + 4 * j), src, ok);
#endif
      }
    }
    const float* wsrc = wpack + (long long)nt * FT_BN * FT_KG_PAD + kt * FT_BK;
#pragma unroll
    for (int idx = t; idx < FT_BN * 8; idx += FT_PTHREADS) {
      const int r = idx >> 3;
      const int ch = idx & 7;
      ft_cp_async16(b_s + r * 128 + (((ch ^ r) & 7) << 4), wsrc + (long long)r * FT_KG_PAD + ch * 4);
    }
    ft_cp_async_commit();

    if (it >= FT_LAG) {
      ft_cp_async_wait<FT_LAG>();  // this thread's copies of stage it - FT_LAG have landed
      ft_publish(smem0_ptr, full0, it - FT_LAG);
    }
  }
  ft_cp_async_wait<0>();
  for (int pub = kIters > FT_LAG ? kIters - FT_LAG : 0; pub < kIters; ++pub) ft_publish(smem0_ptr, full0, pub);
}

// The register-path producer (FT_GATHER 1): the same tile and the same thread-to-element map
// as ft_produce, but through registers: plain (L1-cached) loads of stage it + 1 are issued
// before stage it is rounded and stored, so one stage of loads is always in flight per thread
// and no second pass over shared memory is needed. 4-byte cp.async gathers were measured at
// about 17 cycles per warp instruction on the H200 (docs/perf-notes.md); plain loads of the
// same addresses are not limited that way.
struct ft_stage_regs {
  float a[8][FT_PROWS];
  float4 b[(FT_BN * 8 + FT_PTHREADS - 1) / FT_PTHREADS];
};

__device__ __forceinline__ void ft_load_stage(ft_stage_regs& r, const float* __restrict__ x,
                                              const float* __restrict__ wpack, const ft_index* row_off,
                                              const int* ih0, const int* iw0, int it) {
  const int t = (int)threadIdx.x;
  const int kq = t & 3;
  const int nt = it / FT_KT;
  const int kt = it - nt * FT_KT;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const ft_tap tap = ft_tap_of(kt * FT_BK + kq + 4 * j);
#pragma unroll
    for (int i = 0; i < FT_PROWS; ++i) {
      const int ih = ih0[i] + tap.dr;
      const int iw = iw0[i] + tap.ds;
      const bool ok = (unsigned)ih < (unsigned)FT_PLANT_H && (unsigned)iw < (unsigned)FT_W;
      r.a[j][i] = ok ? __ldg(x + row_off[i] + tap.off) : 0.0f;
    }
  }
  const float* wsrc = wpack + (long long)nt * FT_BN * FT_KG_PAD + kt * FT_BK;
#pragma unroll
  for (int u = 0; u < (FT_BN * 8 + FT_PTHREADS - 1) / FT_PTHREADS; ++u) {
    const int idx = t + u * FT_PTHREADS;
    if (idx < FT_BN * 8) r.b[u] = __ldg(reinterpret_cast<const float4*>(wsrc + (long long)(idx >> 3) * FT_KG_PAD + (idx & 7) * 4));
  }
}

__device__ __forceinline__ void ft_store_stage(const ft_stage_regs& r, float* smem0_ptr, int it) {
  const int t = (int)threadIdx.x;
  float* const a_p = smem0_ptr + (it % FT_STAGES) * (FT_STAGE_BYTES / 4);
  float* const b_p = a_p + FT_A_BYTES / 4;
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < FT_PROWS; ++i)
      a_p[ft_sw128((t >> 5) * 8 + ((t & 31) >> 2) + 8 * (FT_PTHREADS / 32) * i, (t & 3) + 4 * j) / 4] = ft_tf32(r.a[j][i]);
#pragma unroll
  for (int u = 0; u < (FT_BN * 8 + FT_PTHREADS - 1) / FT_PTHREADS; ++u) {
    const int idx = t + u * FT_PTHREADS;
    const int row = idx >> 3;
    const int ch = idx & 7;
    if (idx < FT_BN * 8) *reinterpret_cast<float4*>(b_p + row * 32 + ((ch ^ row) & 7) * 4) = r.b[u];
  }
}

__device__ __forceinline__ void ft_produce_ldg(const float* __restrict__ x, const float* __restrict__ wpack,
                                               float* smem0_ptr, unsigned full0, unsigned empty0, long long m0) {
  const int t = (int)threadIdx.x;
  const int rr = (t & 31) >> 2;
  ft_index row_off[FT_PROWS];
  int ih0[FT_PROWS], iw0[FT_PROWS];
#pragma unroll
  for (int i = 0; i < FT_PROWS; ++i) {
    const long long m = m0 + (t >> 5) * 8 + rr + 8 * (FT_PTHREADS / 32) * i;
    const bool valid = m < FT_M;
    const long long mm = valid ? m : 0;
    const long long n = mm / FT_PQ;
    const ft_index pq = (ft_index)(mm - n * FT_PQ);  // past 2^31 pixels in one image: FT_INDEX_64
    const int p = (int)(pq / FT_Q);
    const int q = (int)(pq - (ft_index)p * FT_Q);
    ih0[i] = valid ? p * FT_STRIDE_H - FT_PAD_H : -(1 << 30);
    iw0[i] = q * FT_STRIDE_W - FT_PAD_W;
#if FT_IN_NHWC
    row_off[i] = valid ? (ft_index)n * FT_HW * FT_C + ((ft_index)ih0[i] * FT_W + iw0[i]) * FT_C : 0;
#else
    row_off[i] = valid ? (ft_index)n * FT_C * FT_HW + (ft_index)ih0[i] * FT_W + iw0[i] : 0;
#endif
  }
  constexpr int kIters = FT_NT * FT_KT;
  ft_stage_regs cur, nxt;
  ft_load_stage(cur, x, wpack, row_off, ih0, iw0, 0);
  for (int it = 0; it < kIters; ++it) {
    if (it + 1 < kIters) ft_load_stage(nxt, x, wpack, row_off, ih0, iw0, it + 1);
    const int stage = it % FT_STAGES;
    ft_mbar_wait(empty0 + 8 * stage, ((it / FT_STAGES) & 1) ^ 1);
    ft_store_stage(cur, smem0_ptr, it);
    ft_fence_proxy_async();
    ft_mbar_arrive(full0 + 8 * stage);
    cur = nxt;
  }
}

// Bias and the pre-reduction (or whole) chain on one accumulator of output channel k.
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

extern "C" __global__ void __launch_bounds__(FT_THREADS, 1)
    ft_fused_conv(const float* __restrict__ x, const float* __restrict__ wpack, float* __restrict__ out,
                  const float* __restrict__ chan) {
  extern __shared__ __align__(1024) unsigned char ft_smem_raw[];
  unsigned dyn_bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;\n" : "=r"(dyn_bytes));
  if (dyn_bytes < FT_SMEM_NEEDED) __trap();  // launched with less than the layout below needs

  // [pad to 1024][stage 0: A | B] ... [stage S-1][epilogue tiles][full x S][empty x S]
  const unsigned raw = (unsigned)__cvta_generic_to_shared(ft_smem_raw);
  const unsigned smem0 = (raw + 1023u) & ~1023u;
  unsigned char* const smem0_ptr = ft_smem_raw + (smem0 - raw);
  float* const epi_all = reinterpret_cast<float*>(smem0_ptr + FT_STAGES * FT_STAGE_BYTES);
  const unsigned full0 = smem0 + FT_STAGES * FT_STAGE_BYTES + FT_EPI_BYTES;
  const unsigned empty0 = full0 + 8 * FT_STAGES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < FT_STAGES; ++s) {
      ft_mbar_init(full0 + 8 * s, FT_PTHREADS);          // every producer thread arrives
      ft_mbar_init(empty0 + 8 * s, 4 * FT_CONSUMERS);    // one arrival per consumer warp
    }
  }
  __syncthreads();

  const long long m0 = (long long)blockIdx.x * FT_BM;
  const int wg = (int)threadIdx.x / 128 - (FT_PRODUCERS - 1);  // consumers are 1..; producers <= 0
  if (wg <= 0) {
#if FT_GATHER
    ft_produce_ldg(x, wpack, reinterpret_cast<float*>(smem0_ptr), full0, empty0, m0);
#else
    ft_produce(x, wpack, reinterpret_cast<float*>(smem0_ptr), smem0, full0, empty0, m0);
#endif
    return;
  }

  // ---- consumer warpgroup c = wg - 1: tile rows 64c .. 64c+63 --------------------------------
  const int c = wg - 1;
  const int tid = (int)threadIdx.x - FT_PTHREADS - 128 * c;  // 0..127 within the warpgroup
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;
  const int tq = lane & 3;
  const int row0 = 16 * warp + g;  // this thread's accumulator rows: row0 and row0 + 8
#if FT_REDUCE
  (void)epi_all;
  float red0 = FT_REDUCE_INIT(), red1 = FT_REDUCE_INIT();
#endif

  float acc[FT_BN / 2];
  for (int nt = 0; nt < FT_NT; ++nt) {
#pragma unroll
    for (int i = 0; i < FT_BN / 2; ++i) acc[i] = 0.0f;
    for (int kt = 0; kt < FT_KT; ++kt) {
      const int it = nt * FT_KT + kt;
      const int stage = it % FT_STAGES;
      ft_mbar_wait(full0 + 8 * stage, (it / FT_STAGES) & 1);
      const unsigned a_s = smem0 + stage * FT_STAGE_BYTES + c * 64 * 128;
#if defined(FT_PLANT_STALE_STAGE)
      // test-only planted bug: the last K tile reads the previous stage's filter tile (retired by
      // the full wait below before that stage goes back: deterministic)
      const unsigned b_s = smem0 + ((kt == FT_KT - 1 && kt > 0) ? (it - 1) % FT_STAGES : stage) * FT_STAGE_BYTES + FT_A_BYTES;
#else
      const unsigned b_s = smem0 + stage * FT_STAGE_BYTES + FT_A_BYTES;
#endif
      ft_wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < FT_BK / 8; ++ks) {
#ifndef FT_PROFILE_NO_MMA
        ft_wgmma<FT_BN>(acc, ft_smem_desc(a_s + 32 * ks), ft_smem_desc(b_s + 32 * ks));
#endif
      }
      ft_wgmma_commit();
#if defined(FT_PLANT_STALE_STAGE)
      if (kt == FT_KT - 1) ft_wgmma_wait<0>();
#endif
      // The previous stage's MMAs are done once at most this stage's group is pending.
      ft_wgmma_wait<1>();
      if (kt > 0 && lane == 0) ft_mbar_arrive(empty0 + 8 * ((it - 1) % FT_STAGES));
    }
    ft_wgmma_wait<0>();
    if (lane == 0) ft_mbar_arrive(empty0 + 8 * ((nt * FT_KT + FT_KT - 1) % FT_STAGES));

#if FT_REDUCE
#pragma unroll
    for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int k = nt * FT_BN + 8 * i + 2 * tq + h;
        if (k < FT_K && !ft_plant_skips_channel(k) && FT_PLANT_TILE_IN(nt)) {
          red0 = ft_reduce_step(red0, ft_epilogue_value(acc[4 * i + h], k, chan));
          red1 = ft_reduce_step(red1, ft_epilogue_value(acc[4 * i + 2 + h], k, chan));
        }
      }
    }
#else
    // 32 channels at a time through shared memory: this warpgroup's 64 pixels x 32 channels.
    float* const epi = epi_all + c * 32 * FT_EPI_PITCH;
#pragma unroll
    for (int cb = 0; cb < FT_BN / 32; ++cb) {
#pragma unroll
      for (int i = 4 * cb; i < 4 * cb + 4; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int col = 8 * i + 2 * tq + h;
          const int k = nt * FT_BN + col;
          if (k < FT_K) {
            epi[(col - 32 * cb) * FT_EPI_PITCH + row0] = ft_epilogue_value(acc[4 * i + h], k, chan);
            epi[(col - 32 * cb) * FT_EPI_PITCH + row0 + 8] = ft_epilogue_value(acc[4 * i + 2 + h], k, chan);
          }
        }
      }
      asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
#if FT_OUT_NHWC
      {
        const int ch = tid & 31;
        const int k = nt * FT_BN + 32 * cb + ch;
        for (int px = tid >> 5; px < 64; px += 4) {
          const long long m = m0 + 64 * c + px;
          if (k < FT_K && m < FT_M && !ft_plant_skips(m / FT_PQ, m % FT_PQ)) {
            out[m * FT_K + k] = epi[ch * FT_EPI_PITCH + px];
          }
        }
      }
#else
      {
        const int px = tid & 63;
        const long long m = m0 + 64 * c + px;
        if (m < FT_M) {
          const long long n = m / FT_PQ;
          const long long pq = m - n * FT_PQ;
          float* const dst = out + n * FT_K * FT_PQ + pq;
          if (!ft_plant_skips(n, pq)) {
            for (int ch = tid >> 6; ch < 32; ch += 2) {
              const int k = nt * FT_BN + 32 * cb + ch;
              if (k < FT_K) dst[(long long)k * FT_PQ] = epi[ch * FT_EPI_PITCH + px];
            }
          }
        }
      }
#endif
      asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    }
#endif
  }

#if FT_REDUCE
  // The four lanes of a quad hold the other columns of the same two rows.
#pragma unroll
  for (int off = 1; off < 4; off *= 2) {
    red0 = ft_reduce_step(red0, __shfl_xor_sync(0xffffffffu, red0, off));
    red1 = ft_reduce_step(red1, __shfl_xor_sync(0xffffffffu, red1, off));
  }
  if (tq == 0) {
    const long long m_a = m0 + 64 * c + row0;
    const long long m_b = m_a + 8;
    if (m_a < FT_M && !ft_plant_skips(m_a / FT_PQ, m_a % FT_PQ)) out[m_a] = ft_chain_post(ft_reduce_finish(red0), 0, chan);
    if (m_b < FT_M && !ft_plant_skips(m_b / FT_PQ, m_b % FT_PQ)) out[m_b] = ft_chain_post(ft_reduce_finish(red1), 0, chan);
  }
#endif
}
