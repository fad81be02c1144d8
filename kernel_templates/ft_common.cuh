// fusetune: helpers shared by every kernel template. A generated source pastes every file it
// uses in order, so NVRTC compiles it without any header search path.
#ifndef FT_COMMON_CUH
#define FT_COMMON_CUH

// The op renderings these helpers call. A generated source has ft_math.cuh pasted in front
// (codegen/source_builder.cpp), so its guard is set and NVRTC never sees this include; a
// template compiled alone (`nvcc -c`, tests/codegen_nvcc_test.cpp) reads it from beside this file.
#ifndef FT_MATH_CUH
#include "ft_math.cuh"
#endif

// Index type for flat element offsets. The generator sets FT_INDEX_64 when some buffer has
// 2^31 elements or more; 32-bit indices make the divisions by the compile-time extents cheap.
#ifndef FT_INDEX_64
#define FT_INDEX_64 0
#endif
#if FT_INDEX_64
typedef long long ft_index;
#else
typedef int ft_index;
#endif

// Test-only: `tune`'s planted-variant switch (FUSETUNE_TEST_PLANT=wrong, codegen/planted.cpp)
// sets this to 1 so a kernel reads the per-channel values of the next channel: an off-by-one
// channel index that verification must reject. Real variants never define it.
#ifndef FT_PLANT_CHANNEL_SHIFT
#define FT_PLANT_CHANNEL_SHIFT 0
#endif
#if FT_PLANT_CHANNEL_SHIFT
#define FT_CHAN_K(k) (((k) + FT_PLANT_CHANNEL_SHIFT) % FT_K)
#else
#define FT_CHAN_K(k) (k)
#endif

// Test-only: more planted bugs (FUSETUNE_TEST_PLANT=bias,row,reduce,twice; codegen/planted.cpp),
// each of a kind verification must catch in both math modes. Real variants define none of them.
//   FT_PLANT_BIAS_SHIFT         the conv bias of channel k+1 is added to channel k
//   FT_PLANT_SKIP_ROW           output row P/2 of image 0 is never stored
//   FT_PLANT_SKIP_LAST_CHANNEL  the channel reduction leaves out channel K-1
//   FT_PLANT_CHAIN_TWICE        channel 0 gets the (pre-reduction) op chain applied twice
#ifndef FT_PLANT_BIAS_SHIFT
#define FT_PLANT_BIAS_SHIFT 0
#endif
// Real variants index the bias by k itself: a signed `% FT_K` there cost four integer
// instructions per output element in every epilogue (the compiler cannot know k >= 0), which
// the fused conv's epilogue warpgroups pay out of the MMA warps' issue slots.
#if FT_PLANT_BIAS_SHIFT
#define FT_BIAS_K(k) (((k) + FT_PLANT_BIAS_SHIFT) % FT_K)
#else
#define FT_BIAS_K(k) (k)
#endif
#ifndef FT_PLANT_SKIP_ROW
#define FT_PLANT_SKIP_ROW 0
#endif
#ifndef FT_PLANT_SKIP_LAST_CHANNEL
#define FT_PLANT_SKIP_LAST_CHANNEL 0
#endif
// Whether the store of output pixel pq of image n is (planted to be) left out.
__device__ __forceinline__ bool ft_plant_skips(long long n, long long pq) {
#if FT_PLANT_SKIP_ROW
  return n == 0 && pq / FT_Q == FT_P / 2;
#else
  (void)n;
  (void)pq;
  return false;
#endif
}
// Whether channel k is (planted to be) left out of the reduction.
__device__ __forceinline__ bool ft_plant_skips_channel(int k) {
#if FT_PLANT_SKIP_LAST_CHANNEL
  return k == FT_K - 1;
#else
  (void)k;
  return false;
#endif
}
// FT_PLANT_REDUCE_INIT: the channel reduction starts from 0 instead of its identity (+inf for
// min, -inf for max): right only where the result has the sign 0 loses to. FT_PLANT_DROP_LAST_TILE:
// the fused convs leave their last column (output-channel) tile out of the reduction.
#if defined(FT_PLANT_REDUCE_INIT)
#define FT_REDUCE_INIT() 0.0f
#else
#define FT_REDUCE_INIT() ft_reduce_init()
#endif
// FT_PLANT_HALO_EDGE: the fused convs' input bounds check is off by one row at the image's
// bottom edge (its last row reads as zero padding).
#if defined(FT_PLANT_HALO_EDGE)
#define FT_PLANT_H (FT_H - 1)
#else
#define FT_PLANT_H FT_H
#endif
#if defined(FT_PLANT_DROP_LAST_TILE)
#define FT_PLANT_TILE_IN(nt) ((nt) != FT_NT - 1)
#else
#define FT_PLANT_TILE_IN(nt) true
#endif
#if defined(FT_PLANT_CHAIN_TWICE) && FT_PLANT_CHAIN_TWICE
#define FT_PLANT_CHAIN(fn, x, k, chan) ((k) == 0 ? fn(fn(x, k, chan), k, chan) : fn(x, k, chan))
#else
#define FT_PLANT_CHAIN(fn, x, k, chan) fn(x, k, chan)
#endif

// ---- vectors -------------------------------------------------------------------------------
// ft_vec_type<V>::type is the CUDA vector type of V floats (1 -> float, 2 -> float2,
// 4 -> float4); loads and stores through it compile to one 4-, 8- or 16-byte access.
// ft_frag<V> is the unpacked form the math works on (an array that unrolled, constant-index
// loops keep in registers).
template <int V> struct ft_vec_type;
template <> struct ft_vec_type<1> { typedef float type; };
template <> struct ft_vec_type<2> { typedef float2 type; };
template <> struct ft_vec_type<4> { typedef float4 type; };

template <int V> struct ft_frag { float e[V]; };

// p must be aligned to V floats: callers guarantee it by only vectorizing along an extent
// that V divides (the constraints in src/codegen/space_*.cpp).
template <int V> __device__ __forceinline__ ft_frag<V> ft_load(const float* p);
template <> __device__ __forceinline__ ft_frag<1> ft_load<1>(const float* p) {
  ft_frag<1> f;
  f.e[0] = *p;
  return f;
}
template <> __device__ __forceinline__ ft_frag<2> ft_load<2>(const float* p) {
  const float2 t = *reinterpret_cast<const float2*>(p);
  ft_frag<2> f;
  f.e[0] = t.x; f.e[1] = t.y;
  return f;
}
template <> __device__ __forceinline__ ft_frag<4> ft_load<4>(const float* p) {
  const float4 t = *reinterpret_cast<const float4*>(p);
  ft_frag<4> f;
  f.e[0] = t.x; f.e[1] = t.y; f.e[2] = t.z; f.e[3] = t.w;
  return f;
}

template <int V> __device__ __forceinline__ void ft_store(float* p, const ft_frag<V>& f);
template <> __device__ __forceinline__ void ft_store<1>(float* p, const ft_frag<1>& f) { *p = f.e[0]; }
template <> __device__ __forceinline__ void ft_store<2>(float* p, const ft_frag<2>& f) {
  *reinterpret_cast<float2*>(p) = make_float2(f.e[0], f.e[1]);
}
template <> __device__ __forceinline__ void ft_store<4>(float* p, const ft_frag<4>& f) {
  *reinterpret_cast<float4*>(p) = make_float4(f.e[0], f.e[1], f.e[2], f.e[3]);
}

// ---- constants -----------------------------------------------------------------------------
// Bit patterns instead of INFINITY/NAN: those come from <math.h>, which NVRTC lacks.
#define FT_INF __int_as_float(0x7f800000)
#define FT_NAN __int_as_float(0x7fffffff)

// ---- op math -------------------------------------------------------------------------------
// The fp32 renderings of the ops (ft_min, ft_mish, ...) are in ft_math.cuh, which every source
// carries in front of this file (codegen/source_builder.cpp): the host proof includes that file
// as it is.

#endif  // FT_COMMON_CUH
