// fusetune: the batched tiled transpose shared by the layout transforms
// (transform_nchw_to_nhwc.cu) and the NHWC -> NCHW epilogue (epilogue_pointwise_nhwc.cu).
#ifndef FT_TRANSPOSE_CUH
#define FT_TRANSPOSE_CUH

#ifndef FT_GENERATED
#include "ft_common.cuh"
#endif

// src (BATCH, ROWS, COLS) row-major -> dst (BATCH, COLS, ROWS) row-major, dst = f(src, row, col).
//
// One block moves a tile of TR source rows x 32 source columns; blockIdx.x enumerates
// (batch, row tile, column tile), column tiles fastest. Shared memory holds the tile as
// tile[TR][33]; the padding column starts row r at bank r mod 32, which makes both phases free
// of bank conflicts:
//   load:  a warp reads VIN source rows of 32 columns (32/VIN lanes per row, VIN floats each,
//          one VIN-wide global load). Scalar smem store j of lane (r, c) hits bank
//          r + VIN*c + j (mod 32): 32 distinct banks.
//   store: a warp writes VOUT dst rows (source columns) of 32 dst columns (source rows), 32/VOUT
//          lanes per row, VOUT floats each (one VOUT-wide global store). Lane (lr, lc) reads
//          tile[VOUT*lr + j][lc]: bank VOUT*lr + lc + j (mod 32): 32 distinct banks.
// So every global access instruction of a warp covers whole 128-byte row segments.
// Requirements (checked by the generator's constraints): COLS % VIN == 0 and ROWS % VOUT == 0
// (vectors stay inside a row and aligned), TR % 32 == 0, THREADS % 32 == 0 and
// THREADS * VIN <= TR * 32 (every thread has a vector to load).
// The extents and every row or column position are ft_index: with FT_INDEX_64 an image of
// 46341 x 46341 pixels (ROWS or COLS past 2^31) is one template argument, and r0 + r cannot wrap.
template <ft_index BATCH, ft_index ROWS, ft_index COLS, int TR, int VIN, int VOUT, int THREADS, class F>
__device__ __forceinline__ void ft_transpose_block(const float* __restrict__ src,
                                                   float* __restrict__ dst, const F& f) {
  constexpr int kTileC = 32;
  constexpr ft_index kTilesC = (COLS + kTileC - 1) / kTileC;
  constexpr ft_index kTilesR = (ROWS + TR - 1) / TR;
  __shared__ float tile[TR][kTileC + 1];

  // blockIdx.x stays unsigned in the 32-bit build (the divisions by constants as before); with
  // FT_INDEX_64 it widens to long long.
  const ft_index tc = (ft_index)(blockIdx.x % kTilesC);
  const ft_index tr = (ft_index)((blockIdx.x / kTilesC) % kTilesR);
  const ft_index b = (ft_index)(blockIdx.x / (kTilesC * kTilesR));
  const ft_index r0 = tr * TR;
  const ft_index c0 = tc * kTileC;
  const float* src_b = src + b * ROWS * COLS;
  float* dst_b = dst + b * ROWS * COLS;

  // Load phase: all loads first (PASSES of them in flight), then f and the smem stores.
  constexpr int kLanesPerRow = kTileC / VIN;
  constexpr int kRowsPerPass = THREADS / kLanesPerRow;
  constexpr int kPasses = (TR + kRowsPerPass - 1) / kRowsPerPass;
  const int lc = (int)threadIdx.x % kLanesPerRow;
  const int lr = (int)threadIdx.x / kLanesPerRow;
  const ft_index col = c0 + lc * VIN;
  ft_frag<VIN> v[kPasses];
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = p * kRowsPerPass + lr;
    if (r < TR && r0 + r < ROWS && col < COLS) {
      v[p] = ft_load<VIN>(src_b + (r0 + r) * COLS + col);
    }
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = p * kRowsPerPass + lr;
    if (r < TR && r0 + r < ROWS && col < COLS) {
#pragma unroll
      for (int j = 0; j < VIN; ++j) tile[r][lc * VIN + j] = f(v[p].e[j], r0 + r, col + j);
    }
  }
  __syncthreads();

  // Store phase: chunks of (32 source rows) x (VOUT source columns), one per warp at a time.
  constexpr int kLanesPerDstRow = 32 / VOUT;
  constexpr int kChunksR = TR / 32;
  constexpr int kChunks = kChunksR * (kTileC / VOUT);
  constexpr int kWarps = THREADS / 32;
  const int warp = (int)threadIdx.x / 32;
  const int lane = (int)threadIdx.x % 32;
  const int slr = lane % kLanesPerDstRow;  // along source rows, VOUT each
  const int slc = lane / kLanesPerDstRow;  // which of the chunk's VOUT source columns
#pragma unroll
  for (int it = 0; it < (kChunks + kWarps - 1) / kWarps; ++it) {
    const int ch = it * kWarps + warp;
    if (ch < kChunks) {
      const int rr = (ch % kChunksR) * 32 + slr * VOUT;  // tile row of the vector's first element
      const int cc = (ch / kChunksR) * VOUT + slc;       // tile column
      if (r0 + rr < ROWS && c0 + cc < COLS) {
        ft_frag<VOUT> o;
#pragma unroll
        for (int j = 0; j < VOUT; ++j) o.e[j] = tile[rr + j][cc];
        ft_store<VOUT>(dst_b + (c0 + cc) * ROWS + (r0 + rr), o);
      }
    }
  }
}

// f for a plain layout change. f(value, source row, source column).
struct ft_identity_fn {
  __device__ __forceinline__ float operator()(float v, ft_index, ft_index) const { return v; }
};

#endif  // FT_TRANSPOSE_CUH
