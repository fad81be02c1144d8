// fusetune: the `unfused` baseline, what PyTorch eager runs: cuDNN's conv with its bias, then
// one out-of-place kernel per op, each reading and writing the whole tensor. The generator
// instantiates one kernel per op with the macros below, all with the same signature
//   NAME(const float* in, float* out, const float* chan)
// so the plan can ping-pong y -> tmp0 -> tmp1 -> ... -> out.
//
// FT_LAYOUT 0: tensors NCHW, channel of flat index i = (i / PQ) % CHANNELS.
// FT_LAYOUT 1: tensors NHWC, channel = i % CHANNELS.
// CHANNELS is K before the reduction and 1 after it.
#ifndef FT_GENERATED
#define FT_UNFUSED_BLOCK 256
#define FT_LAYOUT 0
#define FT_N 2
#define FT_K 8
#define FT_PQ 36
#include "ft_common.cuh"
__device__ __forceinline__ float ft_apply_op0(float v, int k, const float* __restrict__ chan) {
  return v + chan[k];
}
__device__ __forceinline__ float ft_reduce_init() { return FT_INF; }
__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return ft_min(acc, v); }
__device__ __forceinline__ float ft_reduce_finish(float acc) { return acc; }
#endif

#if FT_LAYOUT
#define FT_UNFUSED_CHANNEL(i, CHANNELS) ((int)((i) % (CHANNELS)))
#define FT_UNFUSED_AT(p, k) ((p) * FT_K + (k))  // pixel p = n*PQ + pq, channel k
#else
#define FT_UNFUSED_CHANNEL(i, CHANNELS) ((int)(((i) / FT_PQ) % (CHANNELS)))
#define FT_UNFUSED_AT(p, k) (((p) / FT_PQ * FT_K + (k)) * FT_PQ + (p) % FT_PQ)
#endif

// out[i] = FN(in[i], channel(i), chan) over N * CHANNELS * PQ elements, VEC per thread, one
// vector per thread like PyTorch's vectorized elementwise kernels. The generator picks VEC = 4
// when the element count is a multiple of 4, else 1; the channel is taken per element, so a
// vector may straddle channels.
// Launch: grid.x = ceil(N * CHANNELS * PQ / (FT_UNFUSED_BLOCK * VEC)), block.x = FT_UNFUSED_BLOCK.
#define FT_DEFINE_UNFUSED_ELEMENTWISE(NAME, FN, CHANNELS, VEC)                                 \
  extern "C" __global__ void __launch_bounds__(FT_UNFUSED_BLOCK)                              \
      NAME(const float* __restrict__ in, float* __restrict__ out,                             \
           const float* __restrict__ chan) {                                                  \
    const ft_index total = (ft_index)FT_N * (CHANNELS) * FT_PQ;                               \
    const ft_index i = ((ft_index)blockIdx.x * FT_UNFUSED_BLOCK + (ft_index)threadIdx.x) * (VEC); \
    if (i >= total) return;                                                                   \
    ft_frag<(VEC)> v = ft_load<(VEC)>(in + i);                                                \
    _Pragma("unroll") for (int j = 0; j < (VEC); ++j) {                                       \
      v.e[j] = FN(v.e[j], FT_UNFUSED_CHANNEL(i + j, CHANNELS), chan);                         \
    }                                                                                         \
    ft_store<(VEC)>(out + i, v);                                                              \
  }

// out[p] = FINISH(fold of STEP over the K channels of pixel p, from INIT()), one thread per
// output pixel (N * PQ of them); in NCHW consecutive threads read consecutive pixels of one
// channel (coalesced), like PyTorch's reduction over dim 1.
// Launch: grid.x = ceil(N * PQ / FT_UNFUSED_BLOCK), block.x = FT_UNFUSED_BLOCK.
#define FT_DEFINE_UNFUSED_REDUCE(NAME, INIT, STEP, FINISH)                                     \
  extern "C" __global__ void __launch_bounds__(FT_UNFUSED_BLOCK)                              \
      NAME(const float* __restrict__ in, float* __restrict__ out,                             \
           const float* __restrict__ chan) {                                                  \
    const ft_index p = (ft_index)blockIdx.x * FT_UNFUSED_BLOCK + (ft_index)threadIdx.x;       \
    if (p >= (ft_index)FT_N * FT_PQ) return;                                                  \
    float acc = INIT();                                                                       \
    _Pragma("unroll 8") for (int k = 0; k < FT_K; ++k) acc = STEP(acc, in[FT_UNFUSED_AT(p, k)]); \
    out[p] = FINISH(acc);                                                                     \
  }

#ifndef FT_GENERATED
FT_DEFINE_UNFUSED_ELEMENTWISE(ft_op0, ft_apply_op0, FT_K, 4)
FT_DEFINE_UNFUSED_REDUCE(ft_op1, ft_reduce_init, ft_reduce_step, ft_reduce_finish)
#endif
