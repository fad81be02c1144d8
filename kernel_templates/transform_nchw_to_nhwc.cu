// fusetune: layout transforms for the channels-last designs.
//   x  NCHW (N, C, H*W)  -> x_nhwc (N, H*W, C)   before an NHWC convolution
//   w  KCRS (K, C, R*S)  -> w_krsc (K, R*S, C)   the filters in cuDNN's NHWC filter format
//   y  NCHW <-> NHWC                             the unfused plan's final layout change
// Each is a batched transpose (ft_transpose.cuh). The generator instantiates the ones a plan
// needs with FT_DEFINE_TRANSPOSE, one line each, so every kernel's extents are compile-time
// constants (cheap index math) and each launch shape is derived in one place
// (src/codegen/transpose_launch.cpp):
//   grid.x = BATCH * ceil(ROWS / TILE_R) * ceil(COLS / 32), block.x = THREADS.
#ifndef FT_GENERATED
#define FT_N 2
#define FT_C 6
#define FT_HW 100
#define FT_TR_TILE 32
#define FT_TR_VEC 4
#define FT_TR_OVEC 2
#define FT_TR_BLOCK 256
#include "ft_common.cuh"
#include "ft_transpose.cuh"
#endif

// NAME(const float* src, float* dst): src (BATCH, ROWS, COLS) -> dst (BATCH, COLS, ROWS).
#define FT_DEFINE_TRANSPOSE(NAME, BATCH, ROWS, COLS, TILE_R, VEC_IN, VEC_OUT, THREADS)          \
  extern "C" __global__ void __launch_bounds__(THREADS)                                        \
      NAME(const float* __restrict__ src, float* __restrict__ dst) {                           \
    ft_transpose_block<(BATCH), (ROWS), (COLS), (TILE_R), (VEC_IN), (VEC_OUT), (THREADS)>(     \
        src, dst, ft_identity_fn());                                                           \
  }

#ifndef FT_GENERATED
FT_DEFINE_TRANSPOSE(ft_transform_nchw_to_nhwc, FT_N, FT_C, FT_HW, FT_TR_TILE, FT_TR_VEC,
                    FT_TR_OVEC, FT_TR_BLOCK)
#endif
