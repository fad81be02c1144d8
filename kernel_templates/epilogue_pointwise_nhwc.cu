// fusetune: the pointwise epilogue of the channels-last design with an NCHW output.
// y NHWC (N, P*Q, K) from cuDNN's NHWC convolution, without bias ->
// out NCHW (N, K, P*Q) = ft_chain(y + bias[k], k), the transpose fused in (ft_transpose.cuh):
// a block moves a tile of FT_TILE_PQ pixels x 32 channels (FT_TILE_K) through shared memory,
// reading FT_VEC-wide vectors along K (coalesced along channels) and writing FT_OVEC-wide
// vectors along P*Q (coalesced along pixels); the epilogue math runs once per element on the
// way in.
// Launch: grid.x = N * ceil(PQ / FT_TILE_PQ) * ceil(K / 32), block.x = FT_BLOCK.
// Requires: K % FT_VEC == 0, PQ % FT_OVEC == 0, FT_TILE_PQ % 32 == 0,
//           FT_BLOCK * FT_VEC <= FT_TILE_PQ * 32.
#ifndef FT_GENERATED
#define FT_TILE_PQ 64
#define FT_VEC 4
#define FT_OVEC 4
#define FT_BLOCK 256
#define FT_N 2
#define FT_K 40
#define FT_PQ 36
#define FT_HAS_BIAS 1
#include "ft_common.cuh"
#include "ft_transpose.cuh"
__device__ __forceinline__ float ft_chain(float v, int k, const float* __restrict__ chan) {
  v = ft_min(v, 0.5f);
  v = v + chan[40 + k];
  v = v * 2.0f;
  return v;
}
#endif

#define FT_TILE_K 32  // fixed by ft_transpose_block: 32 channels = one 128-byte row segment

// The epilogue as the transpose's element function: source column = channel.
struct ft_epilogue_nhwc_fn {
  const float* __restrict__ chan;
  __device__ __forceinline__ float operator()(float v, ft_index /*pq*/, ft_index channel) const {
    const int k = FT_CHAN_K((int)channel);  // a column: channel < K
#if FT_HAS_BIAS
    v += chan[FT_BIAS_K(k)];  // the conv bias: chan[0 .. K)
#endif
    return FT_PLANT_CHAIN(ft_chain, v, k, chan);
  }
};

extern "C" __global__ void __launch_bounds__(FT_BLOCK)
    ft_epilogue_pointwise_nhwc(const float* __restrict__ y, float* __restrict__ out,
                               const float* __restrict__ chan) {
  ft_epilogue_nhwc_fn f;
  f.chan = chan;
  ft_transpose_block<FT_N, FT_PQ, FT_K, FT_TILE_PQ, FT_VEC, FT_OVEC, FT_BLOCK>(y, out, f);
}
