// fusetune: the reducing epilogue of the channels-last design. y NHWC (N, P*Q, K) from cuDNN's
// NHWC convolution, without bias; a pixel's K channels are contiguous:
//   out[p] = ft_chain_post(finish(reduce over k of ft_chain_pre(y[p, k] + bias[k], k)))
// for every pixel p = n*PQ + pq (out (N, 1, P, Q) is the same in NCHW and NHWC).
//
// Work split: a group of FT_LANES adjacent lanes owns one pixel (FT_PIX_PER_WARP = 32 / FT_LANES
// pixels per warp, FT_BLOCK / FT_LANES per block). Lane l loads the FT_VEC-wide vectors at
// channels l*FT_VEC + i*FT_LANES*FT_VEC, FT_CPT of them per iteration issued together, and folds
// them into one scalar; the group then combines its lanes with __shfl_xor_sync (offsets below
// FT_LANES never leave the group) and its first lane finishes and stores.
// Launch: grid.x = ceil(N*PQ / (FT_BLOCK / FT_LANES)), block.x = FT_BLOCK.
// Requires K % FT_VEC == 0 (vectors stay inside a pixel and aligned); K need not be a multiple
// of FT_LANES * FT_VEC: the last iteration is predicated.
#ifndef FT_GENERATED
#define FT_LANES 8
#define FT_VEC 4
#define FT_CPT 2
#define FT_BLOCK 256
#define FT_STAGE_CHAN 1
#define FT_N 2
#define FT_K 76
#define FT_PQ 36
#define FT_HAS_BIAS 1
#define FT_CHAN_FLOATS 76
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

#define FT_PIX_PER_WARP (32 / FT_LANES)
#define FT_PIX_PER_BLOCK (FT_BLOCK / FT_LANES)

// Folds one loaded vector (channels k0 .. k0+VEC-1 of the lane's pixel) into acc.
__device__ __forceinline__ float ft_reduce_vector(float acc, const ft_frag<FT_VEC>& v, int k0,
                                                  const float* __restrict__ cv) {
#pragma unroll
  for (int j = 0; j < FT_VEC; ++j) acc = ft_reduce_fold(acc, v.e[j], k0 + j, cv);
  return acc;
}

extern "C" __global__ void __launch_bounds__(FT_BLOCK)
    ft_epilogue_reduce_nhwc(const float* __restrict__ y, float* __restrict__ out,
                            const float* __restrict__ chan) {
#if FT_STAGE_CHAN
  __shared__ float s_chan[FT_CHAN_FLOATS];
  for (int i = (int)threadIdx.x; i < FT_CHAN_FLOATS; i += FT_BLOCK) s_chan[i] = chan[i];
  __syncthreads();
  const float* cv = s_chan;
#else
  const float* cv = chan;
#endif

  constexpr ft_index kPixels = (ft_index)FT_N * FT_PQ;
  const int lane = (int)threadIdx.x % FT_LANES;
  const ft_index p = (ft_index)blockIdx.x * FT_PIX_PER_BLOCK + (ft_index)(threadIdx.x / FT_LANES);

  // Every lane takes part in the shuffles below, so a group past the last pixel keeps the
  // identity instead of returning early.
  float acc = FT_REDUCE_INIT();
  if (p < kPixels) {
    const float* src = y + p * FT_K + lane * FT_VEC;
    constexpr int kSpan = FT_LANES * FT_VEC;  // channels a group covers with one load each
    constexpr int kChunk = kSpan * FT_CPT;    // channels per iteration
    constexpr int kFull = FT_K / kChunk;      // iterations where every load is in range
    for (int it = 0; it < kFull; ++it) {
      ft_frag<FT_VEC> v[FT_CPT];
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) v[c] = ft_load<FT_VEC>(src + it * kChunk + c * kSpan);
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        acc = ft_reduce_vector(acc, v[c], it * kChunk + c * kSpan + lane * FT_VEC, cv);
      }
    }
    if (kFull * kChunk < FT_K) {
      ft_frag<FT_VEC> v[FT_CPT];
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        const int k0 = kFull * kChunk + c * kSpan + lane * FT_VEC;
        if (k0 < FT_K) v[c] = ft_load<FT_VEC>(src + kFull * kChunk + c * kSpan);
      }
#pragma unroll
      for (int c = 0; c < FT_CPT; ++c) {
        const int k0 = kFull * kChunk + c * kSpan + lane * FT_VEC;
        if (k0 < FT_K) acc = ft_reduce_vector(acc, v[c], k0, cv);
      }
    }
  }

#pragma unroll
  for (int off = FT_LANES / 2; off > 0; off /= 2) {
    acc = ft_reduce_step(acc, __shfl_xor_sync(0xffffffffu, acc, off));
  }
  if (p < kPixels && lane == 0 && !ft_plant_skips(p / FT_PQ, p % FT_PQ)) {
    out[p] = ft_chain_post(ft_reduce_finish(acc), 0, cv);
  }
}
