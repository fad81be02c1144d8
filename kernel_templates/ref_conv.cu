// Float64 direct convolution, the verification reference: fp32 x (N,C,H,W) and w (K,C,R,S)
// -> y (N,K,P,Q) in double, no bias, zero padding. Every fp32 x fp32 product is exact in
// double (24 + 24 bits < 53), so the only rounding is the accumulation's. Shape, stride,
// padding and dilation arrive as #defines (rendered by src/reference/gpu_sources.cpp);
// the defaults below only let the template compile on its own.
//
// ft_ref_conv accumulates A = sum |x w| and B = sum (x w)^2 in double next to y, folded at the
// end into the TF32 rule's E0 and V0 (ref_bounds.cuh ft_bound_conv, ft_var_conv; under
// FT_REF_STRICT the fp32 rule's V0, ft_var_dot_fp32), stored as floats rounded up: A and B never
// reach memory, so the bounds cost 8 bytes per output, not 16. Both rules read them.
//
// Work split: a block owns FT_REF_THREADS consecutive output pixels (p,q) of one image n and
// FT_REF_KT consecutive output channels; each thread accumulates FT_REF_KT outputs of its
// pixel. The filter taps are staged in shared memory FT_REF_E at a time, converted to double
// once there, and read as broadcasts, so each x load (coalesced along q) feeds FT_REF_KT
// double operations of four kinds each (the product, y, A, B). Simple, and fast enough:
// kernelbench-31 (0.6 TFLOP) took tens of ms on an H200 without A and B, about four times that
// with them (both rules now always compute them).
//
// Indexing: tensor offsets are 64-bit (N*C*H*W and N*K*P*Q exceed 2^31); offsets inside one
// input image are int, which the host guarantees by requiring C*H*W < 2^31.
#ifndef FT_N
#define FT_N 1
#define FT_C 1
#define FT_H 3
#define FT_W 3
#define FT_K 1
#define FT_R 3
#define FT_S 3
#define FT_P 1
#define FT_Q 1
#define FT_STRIDE_H 1
#define FT_STRIDE_W 1
#define FT_PAD_H 0
#define FT_PAD_W 0
#define FT_DIL_H 1
#define FT_DIL_W 1
#endif
#ifndef FT_REF_STRICT
#define FT_REF_STRICT 0  // V0 of the fp32 rule (1) or the TF32 rule (0): the renderer sets it per math mode
#endif
#ifndef FT_REF_THREADS
#define FT_REF_THREADS 128  // output pixels per block
#endif
#ifndef FT_REF_KT
#define FT_REF_KT 16  // output channels per thread
#endif
#ifndef FT_REF_E
#define FT_REF_E 64  // (c,r,s) taps staged per step
#endif
#ifndef FT_REF_BOUNDS_CUH
#include "ref_bounds.cuh"  // NVRTC gets it pasted in front instead (gpu_sources.cpp)
#endif

#define FT_PQ ((long long)FT_P * FT_Q)
#define FT_RS (FT_R * FT_S)
#define FT_CRS (FT_C * FT_RS)

// y, and the rule's E0 (bound) and V0 (var) per output, as floats rounded up.
extern "C" __global__ void __launch_bounds__(FT_REF_THREADS)
ft_ref_conv(const float* __restrict__ x, const float* __restrict__ w, double* __restrict__ y,
            float* __restrict__ bound, float* __restrict__ var) {
  __shared__ double w_s[FT_REF_E][FT_REF_KT];  // [tap][channel]: one row is read as a broadcast
  __shared__ int x_off[FT_REF_E];              // tap's offset in the image: (c*H + r*dil_h)*W + s*dil_w
  __shared__ int tap_h[FT_REF_E];              // r*dil_h and s*dil_w, for the padding test
  __shared__ int tap_w[FT_REF_E];

  const long long tiles_per_image = (FT_PQ + FT_REF_THREADS - 1) / FT_REF_THREADS;
  const long long n = blockIdx.x / tiles_per_image;
  const long long pq_raw = (blockIdx.x % tiles_per_image) * FT_REF_THREADS + threadIdx.x;
  const bool valid = pq_raw < FT_PQ;
  // Lanes past the end compute a real pixel (the last one) and do not store: the tap loop
  // then needs no test for them, and they still take part in the block's staging.
  const long long pq = valid ? pq_raw : FT_PQ - 1;
  const int p = (int)(pq / FT_Q);
  const int q = (int)(pq % FT_Q);
  const int h0 = p * FT_STRIDE_H - FT_PAD_H;  // window origin; negative inside the padding
  const int w0 = q * FT_STRIDE_W - FT_PAD_W;
  const int origin = h0 * FT_W + w0;
  const float* __restrict__ x_img = x + n * ((long long)FT_C * FT_H * FT_W);
  const int k0 = (int)blockIdx.y * FT_REF_KT;

  double acc[FT_REF_KT];
  double acc_a[FT_REF_KT];  // sum |x w|
  double acc_b[FT_REF_KT];  // sum (x w)^2
#pragma unroll
  for (int kk = 0; kk < FT_REF_KT; ++kk) acc[kk] = acc_a[kk] = acc_b[kk] = 0.0;

  for (int e0 = 0; e0 < FT_CRS; e0 += FT_REF_E) {
    __syncthreads();  // the previous chunk has been consumed by every thread
    // Channel fastest: consecutive threads write consecutive doubles (no bank conflicts); the
    // strided global reads of w hit L1/L2, w being tiny next to x.
    for (int i = threadIdx.x; i < FT_REF_E * FT_REF_KT; i += FT_REF_THREADS) {
      const int kk = i % FT_REF_KT;
      const int e = i / FT_REF_KT;
      const int k = k0 + kk;
      const int tap = e0 + e;
      w_s[e][kk] = (k < FT_K && tap < FT_CRS) ? (double)w[(long long)k * FT_CRS + tap] : 0.0;
    }
    for (int e = threadIdx.x; e < FT_REF_E; e += FT_REF_THREADS) {
      const int tap = min(e0 + e, FT_CRS - 1);  // entries past the end are never read
      const int c = tap / FT_RS;
      const int r = (tap % FT_RS) / FT_S;
      const int s = tap % FT_S;
      tap_h[e] = r * FT_DIL_H;
      tap_w[e] = s * FT_DIL_W;
      x_off[e] = (c * FT_H + r * FT_DIL_H) * FT_W + s * FT_DIL_W;
    }
    __syncthreads();

    const int taps = min(FT_REF_E, FT_CRS - e0);
    for (int e = 0; e < taps; ++e) {
      double xv;
      if (FT_PAD_H == 0 && FT_PAD_W == 0) {
        // Without padding every window lies inside the image (that is how P and Q are defined).
        xv = (double)x_img[origin + x_off[e]];
      } else {
        const int ih = h0 + tap_h[e];
        const int iw = w0 + tap_w[e];
        const bool inside = ih >= 0 && ih < FT_H && iw >= 0 && iw < FT_W;
        xv = inside ? (double)x_img[origin + x_off[e]] : 0.0;
      }
#pragma unroll
      for (int kk = 0; kk < FT_REF_KT; ++kk) {
        const double prod = xv * w_s[e][kk];  // exact
        acc[kk] += prod;
        acc_a[kk] += fabs(prod);
        acc_b[kk] = fma(prod, prod, acc_b[kk]);
      }
    }
  }

  if (!valid) return;
  const long long out0 = (n * FT_K + k0) * FT_PQ + pq;
#pragma unroll
  for (int kk = 0; kk < FT_REF_KT; ++kk) {
    if (k0 + kk < FT_K) {
      y[out0 + kk * FT_PQ] = acc[kk];
      bound[out0 + kk * FT_PQ] = ft_bound_store(ft_bound_conv(acc_a[kk], acc[kk], (double)FT_CRS));
      var[out0 + kk * FT_PQ] = ft_bound_store(ft_var_main(acc[kk], acc_b[kk], (double)FT_CRS, FT_REF_STRICT));
    }
  }
}
