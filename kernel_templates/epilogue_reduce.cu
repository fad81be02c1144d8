// fusetune: the reducing epilogue, NCHW. One pass over the conv output y (N, K, P, Q), written
// without bias by cuDNN:
//   out[n, 0, pq] = ft_chain_post(finish(reduce over k of ft_chain_pre(y[n, k, pq] + bias[k], k)))
//
// Work split: a block owns FT_TILE consecutive pixels of one image n. threadIdx.x (FT_TX =
// FT_TILE / FT_VEC threads) picks FT_VEC adjacent pixels; threadIdx.y (FT_CSPLIT) picks a
// channel slice: thread ty reduces channels k = ty, ty + FT_CSPLIT, ty + 2 FT_CSPLIT, ...,
// FT_CPT of them per iteration with their loads issued together (FT_CPT * FT_VEC floats in
// flight per thread). Each load instruction of a warp reads whole pixel rows of one or more
// channels (coalesced). The FT_CSPLIT partials meet in shared memory; row ty = 0 finishes.
// Launch: grid.x = N * ceil(PQ / FT_TILE), block = (FT_TX, FT_CSPLIT).
// Requires PQ % FT_VEC == 0 (a vector stays in one channel row and aligned).
// FT_STAGE_CHAN 1: the per-channel vectors (FT_CHAN_FLOATS floats) are copied to shared
// memory once per block, since every thread reads them for each of its channels.
#ifndef FT_GENERATED
#define FT_TILE 128
#define FT_VEC 4
#define FT_CPT 4
#define FT_CSPLIT 2
#define FT_STAGE_CHAN 1
#define FT_N 2
#define FT_K 19
#define FT_PQ 36
#define FT_HAS_BIAS 1
#define FT_CHAN_FLOATS 19
#include "ft_common.cuh"
__device__ __forceinline__ float ft_chain_pre(float v, int k, const float* __restrict__ chan) {
  v = v * 2.0f;
  return v;
}
__device__ __forceinline__ float ft_chain_post(float v, int k, const float* __restrict__ chan) {
  return v;
}
__device__ __forceinline__ float ft_reduce_init() { return FT_INF; }
__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return ft_min(acc, v); }
__device__ __forceinline__ float ft_reduce_finish(float acc) { return acc; }
#include "ft_reduce_fold.cuh"
#endif

#define FT_TX (FT_TILE / FT_VEC)

// Folds one loaded vector (FT_VEC pixels of channel `channel`) into the thread's accumulators.
__device__ __forceinline__ void ft_reduce_channel(float (&acc)[FT_VEC], const ft_frag<FT_VEC>& v,
                                                  int channel, const float* __restrict__ cv) {
#pragma unroll
  for (int j = 0; j < FT_VEC; ++j) acc[j] = ft_reduce_fold(acc[j], v.e[j], channel, cv);
}

extern "C" __global__ void __launch_bounds__(FT_TX * FT_CSPLIT)
    ft_epilogue_reduce(const float* __restrict__ y, float* __restrict__ out,
                       const float* __restrict__ chan) {
  constexpr int kTiles = (FT_PQ + FT_TILE - 1) / FT_TILE;
  const int tx = (int)threadIdx.x;
  const int ty = (int)threadIdx.y;

#if FT_STAGE_CHAN
  __shared__ float s_chan[FT_CHAN_FLOATS];
  for (int i = ty * FT_TX + tx; i < FT_CHAN_FLOATS; i += FT_TX * FT_CSPLIT) s_chan[i] = chan[i];
  __syncthreads();
  const float* cv = s_chan;
#else
  const float* cv = chan;
#endif

  const int n = (int)(blockIdx.x / kTiles);
  // ft_index: an image of more than 2^31 pixels (FT_INDEX_64) must not wrap to a negative pq
  // that passes the bound check below.
  const ft_index pq = (ft_index)(blockIdx.x % kTiles) * FT_TILE + tx * FT_VEC;

  float acc[FT_VEC];
#pragma unroll
  for (int j = 0; j < FT_VEC; ++j) acc[j] = FT_REDUCE_INIT();

  if (pq < FT_PQ) {
    const float* src = y + (ft_index)n * FT_K * FT_PQ + pq;
    constexpr int kChunk = FT_CSPLIT * FT_CPT;  // channels the block consumes per iteration
    constexpr int kFull = FT_K / kChunk;        // iterations where every load is in range
    for (int it = 0; it < kFull; ++it) {
      ft_frag<FT_VEC> v[FT_CPT];
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        const int k = it * kChunk + c * FT_CSPLIT + ty;
        v[c] = ft_load<FT_VEC>(src + (ft_index)k * FT_PQ);
      }
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) ft_reduce_channel(acc, v[c], it * kChunk + c * FT_CSPLIT + ty, cv);
    }
    // The last K mod kChunk channels, predicated.
    if (kFull * kChunk < FT_K) {
      ft_frag<FT_VEC> v[FT_CPT];
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        const int k = kFull * kChunk + c * FT_CSPLIT + ty;
        if (k < FT_K) v[c] = ft_load<FT_VEC>(src + (ft_index)k * FT_PQ);
      }
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        const int k = kFull * kChunk + c * FT_CSPLIT + ty;
        if (k < FT_K) ft_reduce_channel(acc, v[c], k, cv);
      }
    }
  }

#if FT_CSPLIT > 1
  // Rows 1..CSPLIT-1 hand their partials to row 0; [row][j][tx] keeps a warp's 32 stores in
  // 32 banks.
  __shared__ float s_part[FT_CSPLIT - 1][FT_VEC][FT_TX];
  if (ty > 0) {
#pragma unroll
    for (int j = 0; j < FT_VEC; ++j) s_part[ty - 1][j][tx] = acc[j];
  }
  __syncthreads();
  if (ty > 0) return;
#pragma unroll
  for (int s = 0; s < FT_CSPLIT - 1; ++s) {
#pragma unroll
    for (int j = 0; j < FT_VEC; ++j) acc[j] = ft_reduce_step(acc[j], s_part[s][j][tx]);
  }
#endif

  if (pq < FT_PQ && !ft_plant_skips(n, pq)) {
    ft_frag<FT_VEC> o;
#pragma unroll
    for (int j = 0; j < FT_VEC; ++j) o.e[j] = ft_chain_post(ft_reduce_finish(acc[j]), 0, cv);
    ft_store<FT_VEC>(out + (ft_index)n * FT_PQ + pq, o);
  }
}
