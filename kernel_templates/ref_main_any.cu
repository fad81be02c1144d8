// Float64 terms of a version-2 main operator on the GPU, the verification reference of problems
// too large for the CPU (docs/verification.md, "The version-2 stages"): per output, the sum
// without bias y, A = sum |terms|, B = sum terms^2 and the term count n -- exactly what
// src/reference/model_main.cpp's conv_any and gemm_any compute on the CPU, in the same term
// order, so y, A and B agree with the CPU's bit for bit. That needs the CPU's operation order
// and no contraction: every fp32 x fp32 product is exact in double (24 + 24 bits < 53), the sums
// are plain `+=` and the program is compiled with --fmad=false, so `b += t * t` rounds the square
// before the add as the CPU (x86-64, no FMA) does.
//
// Two kernels, one per main-operator family, the shape rendered as #defines by
// src/reference/main_terms_source.cpp (the defaults below only let the template compile alone):
//   ft_ref_main_conv  one thread per output of any conv kind (2-D kinds: the 3-D formulas with
//                     D = T = 1); x (N, C, D, H, W), w (K, C/g, T, R, S) or (C, K/g, T, R, S)
//                     when transposed; outputs (N, K, O, P, Q) flat, [first, first + count)
//   ft_ref_main_gemm  a 16 x 16 output tile per block, one output per thread, k staged through
//                     shared memory 16 at a time and summed in ascending k as the CPU does; A
//                     (batch, M, K) or (batch, K, M) with trans_a; B (batch, K, N) or
//                     (batch, N, K) with trans_b (linear: W (N, K) is B with trans_b); tiles
//                     never straddle two batches; row tiles [tile0, tile0 + tiles) of the
//                     (batch, M / 16) tiles, outputs written from row `row0`'s first
//
// The conv's loop nest and index arithmetic are ft_conv_taps.cuh's (shared with the fp32
// fallback conv, conv_nd_direct.cu). Indexing is 64-bit throughout (outputs and inputs pass
// 2^31). Output arrays hold the chunk: element i is output first + i (conv) or row0 * N + i (gemm).
#define FT_MA_KIND_CONV 0
#define FT_MA_KIND_GEMM 1
#ifndef FT_MA_KIND  // alone: a conv (ft_conv_taps.cuh has its shape), the GEMM's too
#define FT_MA_KIND FT_MA_KIND_CONV
#define FT_MA_BATCH 1LL
#define FT_MA_GM 16LL
#define FT_MA_GK 16LL
#define FT_MA_GN 16LL
#define FT_MA_TRANS_A 0
#define FT_MA_TRANS_B 0
#endif

#if FT_MA_KIND == FT_MA_KIND_CONV && !defined(FT_CONV_TAPS_CUH)
#include "ft_conv_taps.cuh"  // rendered sources have it pasted in after the #defines
#endif

#define FT_MA_THREADS 256  // both kernels: conv 256 x 1, gemm 16 x 16
#define FT_MA_TILE 16

#if FT_MA_KIND == FT_MA_KIND_CONV

extern "C" __global__ void __launch_bounds__(FT_MA_THREADS)
    ft_ref_main_conv(const float* __restrict__ x, const float* __restrict__ w, long long first, long long count,
                     double* __restrict__ y, double* __restrict__ a, double* __restrict__ b,
                     long long* __restrict__ n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    long long img, k, o, p, q;
    ft_conv_output(first + i, img, k, o, p, q);
    double acc = 0.0, sum_abs = 0.0, sum_sq = 0.0;
    long long terms = 0;
    ft_conv_terms(img, k, o, p, q, [&](long long wi, long long xi) {
      const double term = (double)w[wi] * (double)x[xi];  // exact: fp32 * fp32
      acc += term;
      sum_abs += fabs(term);
      sum_sq += term * term;
      ++terms;
    });
    y[i] = acc;
    a[i] = sum_abs;
    b[i] = sum_sq;
    n[i] = terms;
  }
}

#else  // FT_MA_KIND_GEMM

extern "C" __global__ void __launch_bounds__(FT_MA_THREADS)
    ft_ref_main_gemm(const float* __restrict__ A, const float* __restrict__ B, long long tile0, long long tiles,
                     long long row0, double* __restrict__ y, double* __restrict__ a, double* __restrict__ b,
                     long long* __restrict__ n) {
  // +1: a column of either tile is read by 16 threads at once without bank conflicts
  __shared__ double a_s[FT_MA_TILE][FT_MA_TILE + 1];  // [m][k]
  __shared__ double b_s[FT_MA_TILE][FT_MA_TILE + 1];  // [k][n]
  const long long m_tiles = (FT_MA_GM + FT_MA_TILE - 1) / FT_MA_TILE;
  const long long n_tiles = (FT_MA_GN + FT_MA_TILE - 1) / FT_MA_TILE;
  const int tx = threadIdx.x, ty = threadIdx.y;
  // blk depends on blockIdx only, so every thread of a block takes the same iterations and
  // reaches the same barriers.
  for (long long blk = blockIdx.x; blk < tiles * n_tiles; blk += gridDim.x) {
    const long long row_tile = tile0 + blk / n_tiles;
    const long long bt = row_tile / m_tiles;
    const long long m0 = (row_tile % m_tiles) * FT_MA_TILE;
    const long long n0 = (blk % n_tiles) * FT_MA_TILE;
    const float* ab = A + bt * FT_MA_GM * FT_MA_GK;
    const float* bb = B + bt * FT_MA_GK * FT_MA_GN;
    double acc = 0.0, sum_abs = 0.0, sum_sq = 0.0;
    for (long long k0 = 0; k0 < FT_MA_GK; k0 += FT_MA_TILE) {
      // Each load has consecutive threads (tx) on consecutive addresses.
#if FT_MA_TRANS_A
      {  // A (K, M): thread loads (m0 + tx, k0 + ty)
        const long long m = m0 + tx, k = k0 + ty;
        a_s[tx][ty] = m < FT_MA_GM && k < FT_MA_GK ? (double)ab[k * FT_MA_GM + m] : 0.0;
      }
#else
      {  // A (M, K): thread loads (m0 + ty, k0 + tx)
        const long long m = m0 + ty, k = k0 + tx;
        a_s[ty][tx] = m < FT_MA_GM && k < FT_MA_GK ? (double)ab[m * FT_MA_GK + k] : 0.0;
      }
#endif
#if FT_MA_TRANS_B
      {  // B (N, K): thread loads (k0 + tx, n0 + ty)
        const long long k = k0 + tx, nn = n0 + ty;
        b_s[tx][ty] = k < FT_MA_GK && nn < FT_MA_GN ? (double)bb[nn * FT_MA_GK + k] : 0.0;
      }
#else
      {  // B (K, N): thread loads (k0 + ty, n0 + tx)
        const long long k = k0 + ty, nn = n0 + tx;
        b_s[ty][tx] = k < FT_MA_GK && nn < FT_MA_GN ? (double)bb[k * FT_MA_GN + nn] : 0.0;
      }
#endif
      __syncthreads();
      // Only real k: a padded zero term would add nothing to y, A or B, but the CPU never adds it.
      const int k_end = FT_MA_GK - k0 < FT_MA_TILE ? int(FT_MA_GK - k0) : FT_MA_TILE;
      for (int kk = 0; kk < k_end; ++kk) {
        const double term = a_s[ty][kk] * b_s[kk][tx];  // exact: both were fp32
        acc += term;
        sum_abs += fabs(term);
        sum_sq += term * term;
      }
      __syncthreads();
    }
    const long long m = m0 + ty, col = n0 + tx;
    if (m < FT_MA_GM && col < FT_MA_GN) {
      const long long at = (bt * FT_MA_GM + m - row0) * FT_MA_GN + col;
      y[at] = acc;
      a[at] = sum_abs;
      b[at] = sum_sq;
      n[at] = FT_MA_GK;
    }
  }
}

#endif
