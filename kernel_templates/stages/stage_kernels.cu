// fusetune: the kernels of the version-2 epilogue stages (issue 43), one out-of-place kernel per
// stage as PyTorch eager runs them, for the `unfused` candidate (float) and, with FT_STAGE_DOUBLE,
// a float64 GPU twin of src/reference/model_stages.cpp (double).
//
// Tensors are logical row-major (channels first) and dense, of rank <= FT_ST_MAX_RANK. Shapes,
// strides and counts arrive at run time in the small POD structs below, passed by value, so one
// compiled kernel serves every shape; src/codegen/stage_source.cpp fills them (after dropping
// size-1 dims and merging contiguous ones) and mirrors their layout field for field. Each struct
// holds only 8-byte fields, so host and device layouts agree; the rendered source static_asserts
// the sizes.
//
// Families (the FT_DEFINE_STAGE_* macros at the end instantiate them with fixed signatures):
//   elementwise   out[i] = OP(x[.], a0[.], a1[.]) with x and the tensor operands read through
//                 broadcast strides (0 on broadcast dims); OP is a rendered functor.
//   rows          a set of "rows", each a reduction over `len` elements: reduce (min, max, sum,
//                 mean), logsumexp, softmax and log_softmax over a dim, norm statistics. One
//                 thread per row (short rows) or one block per row (long rows, a warp-shuffle
//                 tree); no atomics, so every result is the same from run to run. Few long rows
//                 (a batch norm's channels, a sum over everything) are split: a block per chunk
//                 writes partials, then a thread per row folds them in order.
//   pool          max/avg pooling over the last 1-3 dims, one thread per output.
//   norm apply    (x - mean) * rstd [* w] [+ b], the statistics from a rows kernel's scratch.
//   folded        (`epilogue.stages`) a rows, pooling or norm-apply kernel with the run of
//                 elementwise ops before it applied to what it reads and the run after it to
//                 what it writes (ft_st_fold_geom): no pass of their own.
#ifndef FT_STAGE_KERNELS_CU
#define FT_STAGE_KERNELS_CU

#ifndef FT_GENERATED
// Sample set-up for compiling this file alone: the float instantiations at the end.
#define FT_STAGE_DOUBLE 0
#include "../ft_common.cuh"
#endif

#ifndef FT_STAGE_DOUBLE
#define FT_STAGE_DOUBLE 0
#endif

#define FT_ST_MAX_RANK 6
// Every kernel is a template on its index type I: int (a division costs a third of a 64-bit one)
// unless some buffer it touches has 2^30 elements or more, then long long; the renderer picks it
// per kernel (and names the kernel *_i64_*). 2^30, not 2^31: a grid-stride step past the last
// index must not overflow.
// Threads per block of the elementwise, thread-per-row, pooling and norm-apply kernels.
#define FT_ST_BLOCK 256
// Threads per block of the block-per-row kernels: 16 warps hide the latency of one long row.
#define FT_ST_ROW_BLOCK 512

// ---- geometry (mirrored by src/codegen/stage_source.hpp) -----------------------------------
// Elementwise: the output's extents (row-major), and each read tensor's element strides.
struct ft_st_ew_geom {
  long long rank, total;
  long long ext[FT_ST_MAX_RANK];
  long long sx[FT_ST_MAX_RANK], sa0[FT_ST_MAX_RANK], sa1[FT_ST_MAX_RANK];
};
// A run of elementwise ops in one pass (the `epilogue.stages` design): the output's extents,
// x's strides and each tensor operand's (FT_ST_CHAIN_OPERANDS at most; an absent one stride 0).
#define FT_ST_CHAIN_OPERANDS 4
struct ft_st_chain_geom {
  long long rank, total;
  long long ext[FT_ST_MAX_RANK], sx[FT_ST_MAX_RANK];
  long long sa[FT_ST_CHAIN_OPERANDS][FT_ST_MAX_RANK];
};
// Rows: row r starts at the offset of r over the kept dims (kext, kstr); its elements are the
// offsets of j < len over the reduced dims (rext, rstr). Outputs of reduce, logsumexp: out[r]
// (the keepdim and the dropped layout are the same); of norm statistics: out[2r] = mean,
// out[2r + 1] = 1 / sqrt(var + eps); of softmax: out at the input's offsets. Split rows: chunk c
// of row r covers j in [c * chunk_len, (c + 1) * chunk_len); chunks = 1 when not split.
struct ft_st_rows_geom {
  long long rows, len, nk, nr, chunks, chunk_len;
  long long kext[FT_ST_MAX_RANK], kstr[FT_ST_MAX_RANK];
  long long rext[FT_ST_MAX_RANK], rstr[FT_ST_MAX_RANK];
  double eps;
};
// Pooling: `total` outputs; the pooled dims as the last three (D, H, W), missing ones 1/1/1/0.
struct ft_st_pool_geom {
  long long total;
  long long in[3], out[3], k[3], s[3], p[3];
  long long count_include_pad;
};
// Norm apply: element i belongs to statistics row (i / div) % mod.
struct ft_st_group_geom {
  long long div, mod;
};
// Folded runs (the `epilogue.stages` design): a run of elementwise ops applied to each element a
// rows, pooling or norm-apply kernel reads (the prologue, over the input's flat index, in_ext)
// and to each element it writes (the epilogue, over the output's flat index, out_ext), so
// neither run makes a pass of its own. Operand slot j < pro_slots is the prologue's, the others
// the epilogue's; sa[j] reads slot j through broadcast strides over its side's dims.
struct ft_st_fold_geom {
  long long in_rank, out_rank, pro_slots;
  long long in_ext[FT_ST_MAX_RANK], out_ext[FT_ST_MAX_RANK];
  long long sa[FT_ST_CHAIN_OPERANDS][FT_ST_MAX_RANK];
};

// ---- the element type and its math ----------------------------------------------------------
#if FT_STAGE_DOUBLE
// ref_math.cu (pasted before this file) gives the NaN-propagating min/max of op_math.cpp.
typedef double ft_st_t;
__device__ __forceinline__ double ft_st_inf() { return ft_ref_inf(); }
__device__ __forceinline__ double ft_st_min(double a, double b) { return ft_ref_min(a, b); }
__device__ __forceinline__ double ft_st_max(double a, double b) { return ft_ref_max(a, b); }
__device__ __forceinline__ double ft_st_exp(double v) { return exp(v); }
__device__ __forceinline__ double ft_st_log(double v) { return log(v); }
__device__ __forceinline__ double ft_st_rstd(double var, double eps) { return 1.0 / sqrt(var + eps); }
__device__ __forceinline__ bool ft_st_isinf(double v) { return isinf(v); }
#else
// ft_common.cuh / ft_math.cuh: NaN-propagating min/max (torch.amax/amin) and the expf/logf the
// op renderings use.
typedef float ft_st_t;
__device__ __forceinline__ float ft_st_inf() { return FT_INF; }
__device__ __forceinline__ float ft_st_min(float a, float b) { return ft_min(a, b); }
__device__ __forceinline__ float ft_st_max(float a, float b) { return ft_max(a, b); }
__device__ __forceinline__ float ft_st_exp(float v) { return ft_exp(v); }
__device__ __forceinline__ float ft_st_log(float v) { return ft_log(v); }
// Correctly rounded sqrt and division (NVRTC's defaults), where PyTorch's rsqrtf is 2 ulp.
__device__ __forceinline__ float ft_st_rstd(float var, double eps) { return 1.0f / sqrtf(var + (float)eps); }
__device__ __forceinline__ bool ft_st_isinf(float v) { return isinf(v); }
#endif

// The offset of flat index i (row-major over ext[0..n)) through strides str. Unrolled over the
// maximum rank with constant indices so the geometry stays in the parameter bank.
template <typename I>
__device__ __forceinline__ I ft_st_offset(I i, long long n, const long long* ext, const long long* str) {
  if (n == 1) return i * (I)str[0];  // the common case after merging contiguous dims
  I off = 0;
#pragma unroll
  for (int d = FT_ST_MAX_RANK - 1; d >= 0; --d) {
    if (d < n) {
      const I e = (I)ext[d];
      off += (i % e) * (I)str[d];
      i /= e;
    }
  }
  return off;
}

// ---- elementwise ----------------------------------------------------------------------------
// OP()(v, chan) applies the rendered op: chan[0], chan[1] hold this element's tensor operands.
template <typename T, typename I, typename OP>
__device__ __forceinline__ void ft_st_elementwise(const T* __restrict__ x, const T* __restrict__ a0,
                                                  const T* __restrict__ a1, T* __restrict__ out,
                                                  const ft_st_ew_geom& g) {
  const I step = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += step) {
    I ox = 0, o0 = 0, o1 = 0, rest = i;
#pragma unroll
    for (int d = FT_ST_MAX_RANK - 1; d >= 0; --d) {
      if (d < g.rank) {
        const I e = (I)g.ext[d];
        const I c = d == 0 ? rest : rest % e;  // dim 0 needs no division
        rest /= e;
        ox += c * (I)g.sx[d];
        o0 += c * (I)g.sa0[d];
        o1 += c * (I)g.sa1[d];
      }
    }
    T chan[2];
    chan[0] = a0 != nullptr ? a0[o0] : T(0);
    chan[1] = a1 != nullptr ? a1[o1] : T(0);
    out[i] = OP()(x[ox], chan);
  }
}

// ---- folded runs -----------------------------------------------------------------------------
// The identity: a kernel without a prologue or an epilogue.
struct ft_st_no_op {
  template <typename T>
  __device__ T operator()(T v, const T*) const { return v; }
};

// How a kernel reads its input element at flat index `at` and how it finishes an output value
// at flat index `at`: through the rendered prologue PRO and epilogue EPI, their tensor operands
// (slots of `a`, nullptr when absent) read through fg. Without a fold (ft_st_plain) the read is
// x[at] and the value is stored as it is.
template <typename T, typename I, typename PRO, typename EPI>
struct ft_st_fold {
  const T* __restrict__ x;
  const T* const* a;
  const ft_st_fold_geom& fg;
  __device__ __forceinline__ T load(I at) const {
    T chan[FT_ST_CHAIN_OPERANDS];
#pragma unroll
    for (int j = 0; j < FT_ST_CHAIN_OPERANDS; ++j)
      chan[j] = j < fg.pro_slots && a[j] != nullptr ? a[j][ft_st_offset(at, fg.in_rank, fg.in_ext, fg.sa[j])] : T(0);
    return PRO()(x[at], chan);
  }
  __device__ __forceinline__ T finish(T v, I at) const {
    T chan[FT_ST_CHAIN_OPERANDS];
#pragma unroll
    for (int j = 0; j < FT_ST_CHAIN_OPERANDS; ++j)
      chan[j] = j >= fg.pro_slots && a[j] != nullptr ? a[j][ft_st_offset(at, fg.out_rank, fg.out_ext, fg.sa[j])] : T(0);
    return EPI()(v, chan);
  }
};
template <typename T, typename I>
struct ft_st_plain {
  const T* __restrict__ x;
  __device__ __forceinline__ T load(I at) const { return x[at]; }
  __device__ __forceinline__ T finish(T v, I) const { return v; }
};

// ---- rows: reductions, logsumexp, softmax, norm statistics ----------------------------------
#define FT_ST_MODE_MIN 0
#define FT_ST_MODE_MAX 1
#define FT_ST_MODE_SUM 2
#define FT_ST_MODE_MEAN 3
#define FT_ST_MODE_LOGSUMEXP 4
#define FT_ST_MODE_SOFTMAX 5
#define FT_ST_MODE_LOG_SOFTMAX 6
#define FT_ST_MODE_NORM_STATS 7

template <typename T> struct ft_st_sum_op {
  __device__ static T init() { return T(0); }
  __device__ static T step(T a, T b) { return a + b; }
};
template <typename T> struct ft_st_min_op {
  __device__ static T init() { return ft_st_inf(); }
  __device__ static T step(T a, T b) { return ft_st_min(a, b); }
};
template <typename T> struct ft_st_max_op {
  __device__ static T init() { return -ft_st_inf(); }
  __device__ static T step(T a, T b) { return ft_st_max(a, b); }
};

template <bool MIN, typename T> struct ft_st_min_or_max { typedef ft_st_max_op<T> type; };
template <typename T> struct ft_st_min_or_max<true, T> { typedef ft_st_min_op<T> type; };

// Every thread of the block gets the fold of every thread's v. A butterfly (xor) shuffle: each
// lane folds the same operands, only commuted, so every lane holds the same bits; the order is
// fixed by the block size, so results repeat exactly from run to run.
template <typename T, typename R>
__device__ __forceinline__ T ft_st_block_fold(T v) {
  __shared__ T part[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = R::step(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  __syncthreads();  // the previous fold's readers are done with part[]
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < (int)(blockDim.x >> 5) ? part[lane] : R::init();
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = R::step(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The fold over one row's elements owned by this thread (j = first, first + step, ... < end) of
// F(x) under R, x read through the loader L (ft_st_plain, or ft_st_fold's prologue).
template <typename T, typename I, typename R, typename L, typename F>
__device__ __forceinline__ T ft_st_fold_range(const L& ld, I base, const ft_st_rows_geom& g, I first, I end, I step,
                                              F f) {
  T acc = R::init();
#if FT_STAGE_DOUBLE
#pragma unroll 1  // unrolled, ptxas spilled around the calls of double exp/log (a reference: speed matters less)
#endif
  for (I j = first; j < end; j += step) acc = R::step(acc, f(ld.load(base + ft_st_offset(j, g.nr, g.rext, g.rstr))));
  return acc;
}
template <typename T, typename I, typename R, typename L, typename F>
__device__ __forceinline__ T ft_st_row_fold(const L& ld, I base, const ft_st_rows_geom& g, I first, I step, F f) {
  return ft_st_fold_range<T, I, R>(ld, base, g, first, (I)g.len, step, f);
}

template <typename T> struct ft_st_ident {
  __device__ T operator()(T v) const { return v; }
};
template <typename T> struct ft_st_exp_shift {
  T m;
  __device__ T operator()(T v) const { return ft_st_exp(v - m); }
};
template <typename T> struct ft_st_square_dev {
  T m;
  __device__ T operator()(T v) const {
    const T d = v - m;
    return d * d;
  }
};

// One row, by `step` threads starting at `first`; BLOCK: the threads of a block cooperate
// (first = threadIdx.x, step = blockDim.x) and fold their partials. Thread `first == 0` stores
// per-row results. x is read, and each result finished, through the loader L. Variance: two passes (the mean, then the mean squared deviation), as
// model_stages.cpp does: E[x^2] - mean^2 cancels catastrophically when |mean| >> std (a conv
// output with a large bias), and the second pass mostly reads L2 (thread-per-row rows are short;
// a block's row is read in the same order twice).
template <typename T, typename I, int MODE, bool BLOCK, typename L>
__device__ __forceinline__ void ft_st_row(const L& ld, T* __restrict__ out, const ft_st_rows_geom& g, I row, I first,
                                          I step) {
  const I base = ft_st_offset(row, g.nk, g.kext, g.kstr);
  const bool leader = first == 0;
  if (MODE == FT_ST_MODE_MIN || MODE == FT_ST_MODE_MAX) {
    typedef typename ft_st_min_or_max<MODE == FT_ST_MODE_MIN, T>::type R;
    T acc = ft_st_row_fold<T, I, R>(ld, base, g, first, step, ft_st_ident<T>());
    if (BLOCK) acc = ft_st_block_fold<T, R>(acc);
    if (leader) out[row] = ld.finish(acc, row);
  } else if (MODE == FT_ST_MODE_SUM || MODE == FT_ST_MODE_MEAN) {
    T acc = ft_st_row_fold<T, I, ft_st_sum_op<T> >(ld, base, g, first, step, ft_st_ident<T>());
    if (BLOCK) acc = ft_st_block_fold<T, ft_st_sum_op<T> >(acc);
    if (leader) out[row] = ld.finish(MODE == FT_ST_MODE_MEAN ? acc / (T)g.len : acc, row);
  } else if (MODE == FT_ST_MODE_NORM_STATS) {
    T sum = ft_st_row_fold<T, I, ft_st_sum_op<T> >(ld, base, g, first, step, ft_st_ident<T>());
    if (BLOCK) sum = ft_st_block_fold<T, ft_st_sum_op<T> >(sum);
    const T mean = sum / (T)g.len;
    ft_st_square_dev<T> dev;
    dev.m = mean;
    T ss = ft_st_row_fold<T, I, ft_st_sum_op<T> >(ld, base, g, first, step, dev);
    if (BLOCK) ss = ft_st_block_fold<T, ft_st_sum_op<T> >(ss);
    if (leader) {
      out[2 * row] = mean;
      out[2 * row + 1] = ft_st_rstd(ss / (T)g.len, g.eps);
    }
  } else {  // logsumexp, softmax, log_softmax: max-shifted sums of exp
    T m = ft_st_row_fold<T, I, ft_st_max_op<T> >(ld, base, g, first, step, ft_st_ident<T>());
    if (BLOCK) m = ft_st_block_fold<T, ft_st_max_op<T> >(m);
    // logsumexp shifts by 0 where the max is infinite (torch.logsumexp); softmax does not.
    ft_st_exp_shift<T> e;
    e.m = MODE == FT_ST_MODE_LOGSUMEXP && ft_st_isinf(m) ? T(0) : m;
    T s = ft_st_row_fold<T, I, ft_st_sum_op<T> >(ld, base, g, first, step, e);
    if (BLOCK) s = ft_st_block_fold<T, ft_st_sum_op<T> >(s);
    if (MODE == FT_ST_MODE_LOGSUMEXP) {
      if (leader) out[row] = ld.finish(ft_st_log(s) + e.m, row);
    } else {
      const T log_s = MODE == FT_ST_MODE_LOG_SOFTMAX ? ft_st_log(s) : T(0);
#if FT_STAGE_DOUBLE
#pragma unroll 1  // as in ft_st_row_fold
#endif
      for (I j = first; j < g.len; j += step) {
        const I at = base + ft_st_offset(j, g.nr, g.rext, g.rstr);
        const T v = ld.load(at);
        out[at] = ld.finish(MODE == FT_ST_MODE_LOG_SOFTMAX ? (v - m) - log_s : ft_st_exp(v - m) / s, at);
      }
    }
  }
}

template <typename T, typename I, int MODE, typename L>
__device__ __forceinline__ void ft_st_rows_thread(const L& ld, T* __restrict__ out, const ft_st_rows_geom& g) {
  const I step = (I)gridDim.x * blockDim.x;
  for (I row = (I)blockIdx.x * blockDim.x + threadIdx.x; row < g.rows; row += step) {
    ft_st_row<T, I, MODE, false>(ld, out, g, row, 0, 1);
  }
}

template <typename T, typename I, int MODE, typename L>
__device__ __forceinline__ void ft_st_rows_block(const L& ld, T* __restrict__ out, const ft_st_rows_geom& g) {
  // The loop is uniform across the block (row depends on blockIdx only), as the folds'
  // __syncthreads need.
  for (I row = blockIdx.x; row < g.rows; row += gridDim.x) {
    ft_st_row<T, I, MODE, true>(ld, out, g, row, threadIdx.x, blockDim.x);
  }
}

// Split rows, first kernel: block b folds chunk b % chunks of row b / chunks into part[]:
// reduce modes one partial (a sum for mean), norm statistics three (count, mean, M2: the chunk's
// own two passes).
template <typename T, typename I, int MODE, typename L>
__device__ __forceinline__ void ft_st_rows_split(const L& ld, T* __restrict__ part, const ft_st_rows_geom& g) {
  const I blocks = (I)(g.rows * g.chunks);
  for (I b = blockIdx.x; b < blocks; b += gridDim.x) {
    const I row = b / (I)g.chunks, c = b % (I)g.chunks;
    const I base = ft_st_offset(row, g.nk, g.kext, g.kstr);
    const I j0 = c * (I)g.chunk_len;
    const I j1 = j0 + (I)g.chunk_len < (I)g.len ? j0 + (I)g.chunk_len : (I)g.len;
    const I first = j0 + (I)threadIdx.x, step = (I)blockDim.x;
    if (MODE == FT_ST_MODE_MIN || MODE == FT_ST_MODE_MAX) {
      typedef typename ft_st_min_or_max<MODE == FT_ST_MODE_MIN, T>::type R;
      const T acc = ft_st_block_fold<T, R>(ft_st_fold_range<T, I, R>(ld, base, g, first, j1, step, ft_st_ident<T>()));
      if (threadIdx.x == 0) part[b] = acc;
    } else if (MODE == FT_ST_MODE_SUM || MODE == FT_ST_MODE_MEAN) {
      const T acc = ft_st_block_fold<T, ft_st_sum_op<T> >(
          ft_st_fold_range<T, I, ft_st_sum_op<T> >(ld, base, g, first, j1, step, ft_st_ident<T>()));
      if (threadIdx.x == 0) part[b] = acc;
    } else {  // FT_ST_MODE_NORM_STATS
      const T n = (T)(j1 - j0);
      const T sum = ft_st_block_fold<T, ft_st_sum_op<T> >(
          ft_st_fold_range<T, I, ft_st_sum_op<T> >(ld, base, g, first, j1, step, ft_st_ident<T>()));
      ft_st_square_dev<T> dev;
      dev.m = sum / n;
      const T m2 = ft_st_block_fold<T, ft_st_sum_op<T> >(
          ft_st_fold_range<T, I, ft_st_sum_op<T> >(ld, base, g, first, j1, step, dev));
      if (threadIdx.x == 0) {
        part[3 * b] = n;
        part[3 * b + 1] = dev.m;
        part[3 * b + 2] = m2;
      }
    }
  }
}

// Split rows, second kernel: a thread per row folds its chunks' partials in chunk order (so the
// result does not depend on scheduling); norm statistics merge (count, mean, M2) pairwise by
// Chan et al.'s update, which keeps the two-pass accuracy of each chunk.
template <typename T, typename I, int MODE, typename L>
__device__ __forceinline__ void ft_st_rows_combine(const T* __restrict__ part, T* __restrict__ out,
                                                   const ft_st_rows_geom& g, const L& fin) {
  const I step = (I)gridDim.x * blockDim.x;
  const I chunks = (I)g.chunks;
  for (I row = (I)blockIdx.x * blockDim.x + threadIdx.x; row < g.rows; row += step) {
    if (MODE == FT_ST_MODE_NORM_STATS) {
      const T* p = part + 3 * row * chunks;
      T n = p[0], mean = p[1], m2 = p[2];
      for (I c = 1; c < chunks; ++c) {
        const T nb = p[3 * c], delta = p[3 * c + 1] - mean, n_ab = n + nb;
        mean += delta * (nb / n_ab);
        m2 += p[3 * c + 2] + delta * delta * (n * nb / n_ab);
        n = n_ab;
      }
      out[2 * row] = mean;
      out[2 * row + 1] = ft_st_rstd(m2 / (T)g.len, g.eps);
    } else {
      typedef typename ft_st_min_or_max<MODE == FT_ST_MODE_MIN, T>::type MR;
      const T* p = part + row * chunks;
      T acc = p[0];
      for (I c = 1; c < chunks; ++c) {
        acc = (MODE == FT_ST_MODE_MIN || MODE == FT_ST_MODE_MAX) ? MR::step(acc, p[c]) : acc + p[c];
      }
      out[row] = fin.finish(MODE == FT_ST_MODE_MEAN ? acc / (T)g.len : acc, row);
    }
  }
}

// ---- pooling --------------------------------------------------------------------------------
// One pooled dim's window for output o: [lo, hi) inside the input, `padded` its size clipped to
// the padded input only (PyTorch's count_include_pad divisor); model_stages.cpp's window().
template <typename I> struct ft_st_window {
  I lo, hi, padded;
};
template <typename I>
__device__ __forceinline__ ft_st_window<I> ft_st_pool_window(I o, I size, I k, I s, I p) {
  const I start = o * s - p;
  const I end = start + k < size + p ? start + k : size + p;
  ft_st_window<I> w;
  w.lo = start > 0 ? start : 0;
  w.hi = end < size ? end : size;
  w.padded = end - start;
  return w;
}

template <typename T, typename I, bool IS_MAX, typename L>
__device__ __forceinline__ void ft_st_pool(const L& ld, T* __restrict__ out, const ft_st_pool_geom& g) {
  const I step = (I)gridDim.x * blockDim.x;
  for (I o = (I)blockIdx.x * blockDim.x + threadIdx.x; o < g.total; o += step) {
    const I out0 = (I)g.out[0], out1 = (I)g.out[1], out2 = (I)g.out[2];
    const I in0 = (I)g.in[0], in1 = (I)g.in[1], in2 = (I)g.in[2];
    const I ow = o % out2;
    I t = o / out2;
    const I oh = t % out1;
    t /= out1;
    const I od = t % out0;
    const I b = t / out0;
    const ft_st_window<I> wd = ft_st_pool_window(od, in0, (I)g.k[0], (I)g.s[0], (I)g.p[0]);
    const ft_st_window<I> wh = ft_st_pool_window(oh, in1, (I)g.k[1], (I)g.s[1], (I)g.p[1]);
    const ft_st_window<I> ww = ft_st_pool_window(ow, in2, (I)g.k[2], (I)g.s[2], (I)g.p[2]);
    const I xb = b * in0 * in1 * in2;
    T acc = IS_MAX ? -ft_st_inf() : T(0);
    for (I d = wd.lo; d < wd.hi; ++d) {
      for (I h = wh.lo; h < wh.hi; ++h) {
        for (I w = ww.lo; w < ww.hi; ++w) {
          const T v = ld.load(xb + (d * in1 + h) * in2 + w);
          acc = IS_MAX ? ft_st_max(acc, v) : acc + v;
        }
      }
    }
    if (IS_MAX) {
      out[o] = ld.finish(acc, o);
    } else {
      const I divisor = g.count_include_pad ? wd.padded * wh.padded * ww.padded
                                                    : (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
      out[o] = ld.finish(acc / (T)divisor, o);
    }
  }
}

// ---- a run of elementwise ops ------------------------------------------------------------
// OP()(v, chan) applies the run's ops in order; chan[j] holds this element's tensor operand j
// (the run numbers its ops' tensor operands in order). One read of x and of each operand, one
// write: eager's k passes over the value become one.
template <typename T, typename I, typename OP>
__device__ __forceinline__ void ft_st_chain(const T* __restrict__ x, const T* const (&a)[FT_ST_CHAIN_OPERANDS],
                                            T* __restrict__ out, const ft_st_chain_geom& g) {
  const I step = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += step) {
    I ox = 0, o[FT_ST_CHAIN_OPERANDS] = {}, rest = i;
#pragma unroll
    for (int d = FT_ST_MAX_RANK - 1; d >= 0; --d) {
      if (d < g.rank) {
        const I e = (I)g.ext[d];
        const I c = d == 0 ? rest : rest % e;
        rest /= e;
        ox += c * (I)g.sx[d];
#pragma unroll
        for (int j = 0; j < FT_ST_CHAIN_OPERANDS; ++j) o[j] += c * (I)g.sa[j][d];
      }
    }
    T chan[FT_ST_CHAIN_OPERANDS];
#pragma unroll
    for (int j = 0; j < FT_ST_CHAIN_OPERANDS; ++j) chan[j] = a[j] != nullptr ? a[j][o[j]] : T(0);
    out[i] = OP()(x[ox], chan);
  }
}

// ---- norm apply -----------------------------------------------------------------------------
// out[i] = (x[i] - mean) * rstd, then * w, then + b (model_stages.cpp's order); x, out dense of
// the same shape (g.sx), w and b (nullptr when absent) read through broadcast strides (sa0, sa1).
template <typename T, typename I, typename L>
__device__ __forceinline__ void ft_st_norm_apply(const L& ld, const T* __restrict__ stats,
                                                 const T* __restrict__ w, const T* __restrict__ b,
                                                 T* __restrict__ out, const ft_st_ew_geom& g,
                                                 const ft_st_group_geom& gg) {
  const I step = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += step) {
    const I grp = (i / (I)gg.div) % (I)gg.mod;
    T v = (ld.load(i) - stats[2 * grp]) * stats[2 * grp + 1];
    if (w != nullptr) v *= w[ft_st_offset(i, g.rank, g.ext, g.sa0)];
    if (b != nullptr) v += b[ft_st_offset(i, g.rank, g.ext, g.sa1)];
    out[i] = ld.finish(v, i);
  }
}

// ---- instantiation --------------------------------------------------------------------------
// IDX: the index type, int or long long (see ft_st_offset). Launch: block FT_ST_BLOCK
// (FT_ST_ROW_BLOCK for ROWS_BLOCK), grid from the renderer (any size: every kernel loops
// grid-stride). Several instantiations may share one source (one module per program).
#define FT_DEFINE_STAGE_ELEMENTWISE(NAME, OP, IDX)                                                 \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, const ft_st_t* __restrict__ a0, const ft_st_t* __restrict__ a1, \
           ft_st_t* __restrict__ out, const ft_st_ew_geom g) {                                    \
    ft_st_elementwise<ft_st_t, IDX, OP>(x, a0, a1, out, g);                                       \
  }
#define FT_DEFINE_STAGE_CHAIN(NAME, OP, IDX)                                                       \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, const ft_st_t* __restrict__ a0, const ft_st_t* __restrict__ a1, \
           const ft_st_t* __restrict__ a2, const ft_st_t* __restrict__ a3, ft_st_t* __restrict__ out, \
           const ft_st_chain_geom g) {                                                            \
    const ft_st_t* const a[FT_ST_CHAIN_OPERANDS] = {a0, a1, a2, a3};                              \
    ft_st_chain<ft_st_t, IDX, OP>(x, a, out, g);                                                  \
  }
#define FT_DEFINE_STAGE_ROWS_THREAD(NAME, MODE, IDX)                                               \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, ft_st_t* __restrict__ out, const ft_st_rows_geom g) {   \
    const ft_st_plain<ft_st_t, IDX> ld{x};                                                        \
    ft_st_rows_thread<ft_st_t, IDX, MODE>(ld, out, g);                                            \
  }
#define FT_DEFINE_STAGE_ROWS_BLOCK(NAME, MODE, IDX)                                                \
  extern "C" __global__ void __launch_bounds__(FT_ST_ROW_BLOCK)                                   \
      NAME(const ft_st_t* __restrict__ x, ft_st_t* __restrict__ out, const ft_st_rows_geom g) {   \
    const ft_st_plain<ft_st_t, IDX> ld{x};                                                        \
    ft_st_rows_block<ft_st_t, IDX, MODE>(ld, out, g);                                             \
  }
#define FT_DEFINE_STAGE_ROWS_SPLIT(NAME, MODE, IDX)                                                \
  extern "C" __global__ void __launch_bounds__(FT_ST_ROW_BLOCK)                                   \
      NAME(const ft_st_t* __restrict__ x, ft_st_t* __restrict__ part, const ft_st_rows_geom g) {  \
    const ft_st_plain<ft_st_t, IDX> ld{x};                                                        \
    ft_st_rows_split<ft_st_t, IDX, MODE>(ld, part, g);                                            \
  }
#define FT_DEFINE_STAGE_ROWS_COMBINE(NAME, MODE, IDX)                                              \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ part, ft_st_t* __restrict__ out, const ft_st_rows_geom g) { \
    const ft_st_plain<ft_st_t, IDX> fin{nullptr};                                                 \
    ft_st_rows_combine<ft_st_t, IDX, MODE>(part, out, g, fin);                                    \
  }
#define FT_DEFINE_STAGE_POOL(NAME, IS_MAX, IDX)                                                    \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, ft_st_t* __restrict__ out, const ft_st_pool_geom g) {   \
    const ft_st_plain<ft_st_t, IDX> ld{x};                                                        \
    ft_st_pool<ft_st_t, IDX, IS_MAX>(ld, out, g);                                                 \
  }
#define FT_DEFINE_STAGE_NORM_APPLY(NAME, IDX)                                                      \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, const ft_st_t* __restrict__ stats, const ft_st_t* __restrict__ w, \
           const ft_st_t* __restrict__ b, ft_st_t* __restrict__ out, const ft_st_ew_geom g,       \
           const ft_st_group_geom gg) {                                                           \
    const ft_st_plain<ft_st_t, IDX> ld{x};                                                        \
    ft_st_norm_apply<ft_st_t, IDX>(ld, stats, w, b, out, g, gg);                                  \
  }

// The folded forms (ft_st_fold_geom): operand slots a0-a3 after x, the fold's geometry last.
// PRO and EPI are rendered functors (ft_st_no_op where the kernel has none).
#define FT_ST_FOLD_PARAMS                                                                          \
  const ft_st_t *__restrict__ a0, const ft_st_t *__restrict__ a1, const ft_st_t *__restrict__ a2,  \
      const ft_st_t *__restrict__ a3
#define FT_ST_FOLD_LOADER(IDX, PRO, EPI, X)                                                        \
  const ft_st_t* const a[FT_ST_CHAIN_OPERANDS] = {a0, a1, a2, a3};                                \
  const ft_st_fold<ft_st_t, IDX, PRO, EPI> ld{X, a, fg}
#define FT_DEFINE_STAGE_ROWS_THREAD_FOLD(NAME, MODE, IDX, PRO, EPI)                                \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ out,           \
           const ft_st_rows_geom g, const ft_st_fold_geom fg) {                                   \
    FT_ST_FOLD_LOADER(IDX, PRO, EPI, x);                                                          \
    ft_st_rows_thread<ft_st_t, IDX, MODE>(ld, out, g);                                            \
  }
#define FT_DEFINE_STAGE_ROWS_BLOCK_FOLD(NAME, MODE, IDX, PRO, EPI)                                 \
  extern "C" __global__ void __launch_bounds__(FT_ST_ROW_BLOCK)                                   \
      NAME(const ft_st_t* __restrict__ x, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ out,           \
           const ft_st_rows_geom g, const ft_st_fold_geom fg) {                                   \
    FT_ST_FOLD_LOADER(IDX, PRO, EPI, x);                                                          \
    ft_st_rows_block<ft_st_t, IDX, MODE>(ld, out, g);                                             \
  }
#define FT_DEFINE_STAGE_ROWS_SPLIT_FOLD(NAME, MODE, IDX, PRO)                                      \
  extern "C" __global__ void __launch_bounds__(FT_ST_ROW_BLOCK)                                   \
      NAME(const ft_st_t* __restrict__ x, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ part,          \
           const ft_st_rows_geom g, const ft_st_fold_geom fg) {                                   \
    FT_ST_FOLD_LOADER(IDX, PRO, ft_st_no_op, x);                                                  \
    ft_st_rows_split<ft_st_t, IDX, MODE>(ld, part, g);                                            \
  }
#define FT_DEFINE_STAGE_ROWS_COMBINE_FOLD(NAME, MODE, IDX, EPI)                                    \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ part, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ out,        \
           const ft_st_rows_geom g, const ft_st_fold_geom fg) {                                   \
    FT_ST_FOLD_LOADER(IDX, ft_st_no_op, EPI, nullptr);                                            \
    ft_st_rows_combine<ft_st_t, IDX, MODE>(part, out, g, ld);                                     \
  }
#define FT_DEFINE_STAGE_POOL_FOLD(NAME, IS_MAX, IDX, PRO, EPI)                                     \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ out,           \
           const ft_st_pool_geom g, const ft_st_fold_geom fg) {                                   \
    FT_ST_FOLD_LOADER(IDX, PRO, EPI, x);                                                          \
    ft_st_pool<ft_st_t, IDX, IS_MAX>(ld, out, g);                                                 \
  }
#define FT_DEFINE_STAGE_NORM_APPLY_FOLD(NAME, IDX, PRO, EPI)                                       \
  extern "C" __global__ void __launch_bounds__(FT_ST_BLOCK)                                       \
      NAME(const ft_st_t* __restrict__ x, const ft_st_t* __restrict__ stats, const ft_st_t* __restrict__ w, \
           const ft_st_t* __restrict__ b, FT_ST_FOLD_PARAMS, ft_st_t* __restrict__ out,           \
           const ft_st_ew_geom g, const ft_st_group_geom gg, const ft_st_fold_geom fg) {          \
    FT_ST_FOLD_LOADER(IDX, PRO, EPI, x);                                                          \
    ft_st_norm_apply<ft_st_t, IDX>(ld, stats, w, b, out, g, gg);                                  \
  }

#ifndef FT_GENERATED
struct ft_st_sample_op {
  __device__ ft_st_t operator()(ft_st_t v, const ft_st_t* chan) const { return ft_max(v + chan[0], 0.0f); }
};
FT_DEFINE_STAGE_ELEMENTWISE(ft_st_sample_elementwise, ft_st_sample_op, int)
FT_DEFINE_STAGE_CHAIN(ft_st_sample_chain, ft_st_sample_op, long long)
FT_DEFINE_STAGE_ROWS_THREAD(ft_st_sample_rows_thread, FT_ST_MODE_SOFTMAX, int)
FT_DEFINE_STAGE_ROWS_BLOCK(ft_st_sample_rows_block, FT_ST_MODE_NORM_STATS, long long)
FT_DEFINE_STAGE_ROWS_SPLIT(ft_st_sample_rows_split, FT_ST_MODE_NORM_STATS, int)
FT_DEFINE_STAGE_ROWS_COMBINE(ft_st_sample_rows_combine, FT_ST_MODE_NORM_STATS, int)
FT_DEFINE_STAGE_POOL(ft_st_sample_pool, false, int)
FT_DEFINE_STAGE_NORM_APPLY(ft_st_sample_norm_apply, long long)
FT_DEFINE_STAGE_ROWS_THREAD_FOLD(ft_st_sample_rows_thread_fold, FT_ST_MODE_SOFTMAX, int, ft_st_sample_op, ft_st_sample_op)
FT_DEFINE_STAGE_ROWS_BLOCK_FOLD(ft_st_sample_rows_block_fold, FT_ST_MODE_NORM_STATS, int, ft_st_sample_op, ft_st_no_op)
FT_DEFINE_STAGE_ROWS_SPLIT_FOLD(ft_st_sample_rows_split_fold, FT_ST_MODE_MEAN, int, ft_st_sample_op)
FT_DEFINE_STAGE_ROWS_COMBINE_FOLD(ft_st_sample_rows_combine_fold, FT_ST_MODE_MEAN, int, ft_st_sample_op)
FT_DEFINE_STAGE_POOL_FOLD(ft_st_sample_pool_fold, true, long long, ft_st_sample_op, ft_st_sample_op)
FT_DEFINE_STAGE_NORM_APPLY_FOLD(ft_st_sample_norm_apply_fold, int, ft_st_sample_op, ft_st_sample_op)
#endif

#endif  // FT_STAGE_KERNELS_CU
