// fusetune's own pieces of a version-2 conv step where cuDNN's graph API falls short
// (worker/main_op_steps.cpp), channels-first fp32 tensors, PyTorch's filter layouts:
//   ft_conv_nd_add_bias  y += bias[k], after cuDNN's graph of the conv alone: cuDNN refuses every
//                        transposed conv with the bias inside the graph (call 123's
//                        gpu_conv_nd_graph_test: each `_bias` transposed case refused, each
//                        `_nobias` one ran; call 128: KernelBench #2), as PyTorch adds it apart too;
//   ft_conv_nd_direct    the whole conv, where cuDNN builds no configuration even without the bias.
//                        Any of the four conv kinds, groups, dilation, per-dim stride and padding,
//                        output padding (it only sizes the output), an optional bias.
//
// One thread per output, a float accumulator over ft_conv_taps.cuh's terms in the reference's
// order. Not fast -- every product reloads its input and weight -- but correct for every shape
// the spec allows; the candidate's label says which conv ran, so its times are never taken for
// cuDNN's. Exact fp32 products (no TF32), so it meets the fp32 rule as well as tf32's.
//
// The shape comes as FT_MA_* #defines (src/reference/main_terms_source.cpp renders them, with
// ft_conv_taps.cuh after them); alone, the template takes the header's default shape.
#ifndef FT_CONV_TAPS_CUH
#include "ft_conv_taps.cuh"  // rendered sources have it pasted in after the #defines
#endif

#define FT_DIRECT_THREADS 256

// y[i] += bias[k] for every output i of (N, K, O, P, Q), k its channel; grid-stride.
extern "C" __global__ void __launch_bounds__(FT_DIRECT_THREADS)
    ft_conv_nd_add_bias(float* __restrict__ y, const float* __restrict__ bias) {
  const long long total = FT_MA_N * FT_MA_K * FT_MA_O * FT_MA_P * FT_MA_Q;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long img, k, o, p, q;
    ft_conv_output(i, img, k, o, p, q);
    y[i] += bias[k];
  }
}

// y[i] = sum of w * x over output i's terms (+ bias[k] when bias is not null), for every output
// of (N, K, O, P, Q); a grid-stride loop, so any grid covers them all.
extern "C" __global__ void __launch_bounds__(FT_DIRECT_THREADS)
    ft_conv_nd_direct(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                      float* __restrict__ y) {
  const long long total = FT_MA_N * FT_MA_K * FT_MA_O * FT_MA_P * FT_MA_Q;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    long long img, k, o, p, q;
    ft_conv_output(i, img, k, o, p, q);
    float acc = 0.0f;
    ft_conv_terms(img, k, o, p, q, [&](long long wi, long long xi) { acc = fmaf(w[wi], x[xi], acc); });
    y[i] = bias != nullptr ? acc + bias[k] : acc;
  }
}
