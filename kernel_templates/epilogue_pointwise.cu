// fusetune: the pointwise epilogue. One pass over the conv output y (N, K, P, Q), written
// without bias by cuDNN: out = ft_chain(y + bias[k], k) for every element.
//
// Layouts: FT_LAYOUT 0: y and out NCHW, channel k = (i / PQ) % K.
//          FT_LAYOUT 1: y and out NHWC, channel k = i % K (the channels-last design
//          when the spec allows an NHWC output).
// Work split: a block covers FT_EPT consecutive slabs of FT_BLOCK * FT_VEC elements; thread t
// owns the vector at t * FT_VEC in each slab, so each load/store instruction of a warp is
// contiguous (coalesced) and a thread has FT_EPT independent loads in flight.
// Launch: grid.x = ceil(N*K*P*Q / (FT_BLOCK * FT_VEC * FT_EPT)), block.x = FT_BLOCK.
// Requires: NCHW: PQ % FT_VEC == 0 (a vector never straddles two channels and stays aligned);
//           NHWC: K % FT_VEC == 0 (a vector covers channels k..k+VEC-1 of one pixel).
// FT_IN_PLACE 1 when the plan passes y as out too: then the pointers may alias, so no
// __restrict__ (each element is read and written by the same thread, read first).
#ifndef FT_GENERATED
#define FT_BLOCK 256
#define FT_VEC 4
#define FT_EPT 2
#define FT_IN_PLACE 0
#define FT_LAYOUT 0
#define FT_N 2
#define FT_K 8
#define FT_PQ 36
#define FT_HAS_BIAS 1
#include "ft_common.cuh"
__device__ __forceinline__ float ft_chain(float v, int k, const float* __restrict__ chan) {
  v = ft_min(v, 0.5f);
  v = v + chan[8 + k];
  v = v * 2.0f;
  return v;
}
#endif

#if FT_IN_PLACE
#define FT_PW_RESTRICT
#else
#define FT_PW_RESTRICT __restrict__
#endif

extern "C" __global__ void __launch_bounds__(FT_BLOCK)
    ft_epilogue_pointwise(const float* FT_PW_RESTRICT y, float* FT_PW_RESTRICT out,
                          const float* __restrict__ chan) {
  constexpr ft_index kTotal = (ft_index)FT_N * FT_K * FT_PQ;
  constexpr int kSlab = FT_BLOCK * FT_VEC;
  const ft_index base = (ft_index)blockIdx.x * (kSlab * FT_EPT) + (ft_index)threadIdx.x * FT_VEC;

  // kTotal is a multiple of FT_VEC, so a vector is entirely inside or entirely past the end.
  ft_frag<FT_VEC> v[FT_EPT];
#pragma unroll
  for (int e = 0; e < FT_EPT; ++e) {
    const ft_index i = base + (ft_index)e * kSlab;
    if (i < kTotal) v[e] = ft_load<FT_VEC>(y + i);
  }
#pragma unroll
  for (int e = 0; e < FT_EPT; ++e) {
    const ft_index i = base + (ft_index)e * kSlab;
    if (i < kTotal) {
#if FT_LAYOUT
      const int k0 = (int)(i % FT_K);
#else
      const int k0 = (int)((i / FT_PQ) % FT_K);
#endif
#pragma unroll
      for (int j = 0; j < FT_VEC; ++j) {
        const int k = FT_CHAN_K(FT_LAYOUT ? k0 + j : k0);
        float x = v[e].e[j];
#if FT_HAS_BIAS
        x += chan[FT_BIAS_K(k)];  // the conv bias: chan[0 .. K)
#endif
        v[e].e[j] = FT_PLANT_CHAIN(ft_chain, x, k, chan);
      }
#if FT_LAYOUT
      const ft_index pixel = i / FT_K;
#else
      const ft_index pixel = i / ((ft_index)FT_K * FT_PQ) * FT_PQ + i % FT_PQ;
#endif
      if (ft_plant_skips(pixel / FT_PQ, pixel % FT_PQ)) continue;
      ft_store<FT_VEC>(out + i, v[e]);
    }
  }
}
