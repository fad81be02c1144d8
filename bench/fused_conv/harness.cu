// Standalone check of kernel_templates/fused_conv.cu on one configuration, for debugging the
// template on the GPU without fusetune (fusetune's own verification is the real gate):
//   nvcc -gencode arch=compute_90a,code=sm_90a -std=c++17 -I kernel_templates -I bench/fused_conv \
//        -DFT_BM=128 ... bench/fused_conv/harness.cu      (-DFT_HALO=1 -DFT_TP=1 -DFT_TQ=128: the prototype
//        v5, halo_conv.cu; -DFT_HALO=6: kernel_templates/fused_conv_halo.cu, prototyped as v6)
// Epilogue: y = conv + bias, then `v * 2` (and min over channels when FT_REDUCE). Prints the
// worst errors against a float64 CPU conv and where they are (first few wrong elements).
// Diagnostics (timing only, for docs/perf-notes.md; fusetune's verification is the gate):
//   -DFT_HARNESS_CHAIN=1    epilogue mish(mish(v)) (ft_math.cuh's rendering) instead of v * 2:
//                           what two transcendental ops cost inside the fused conv;
//   -DFT_HARNESS_CHAIN=2    softplus(gelu(v)), the other chain of issue 10's pipeline figures;
//   -DFT_HARNESS_CHAIN=3    mish | mish from ex2.approx and rcp.approx alone (fewer instructions)
//   -DFT_HARNESS_NOSTORE=1  the output is never stored (the check is skipped): what the
//                           epilogue's global stores cost
//   -DFT_HARNESS_ITERS=N    timed launches (default 10), each between its own events: the mean,
//                           the median, and the means of the first and last tenth (sustained-load
//                           clocks show as a last tenth slower than the first)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define FT_GENERATED 1
#ifndef FT_P
#define FT_P ((FT_H + 2 * FT_PAD_H - FT_DIL_H * (FT_R - 1) - 1) / FT_STRIDE_H + 1)
#define FT_Q ((FT_W + 2 * FT_PAD_W - FT_DIL_W * (FT_S - 1) - 1) / FT_STRIDE_W + 1)
#endif
#define FT_PQ (FT_P * FT_Q)
#define FT_HW (FT_H * FT_W)
#define FT_RS (FT_R * FT_S)
#define FT_HAS_BIAS 1
#define FT_NUM_PARAMS 0
#define FT_CHAN_FLOATS FT_K
#ifndef FT_HALO
#define FT_SMEM_BYTES (1024 + FT_STAGES * (FT_BM + FT_BN) * FT_BK * 4 + (FT_BM / 64) * 32 * 68 * 4 + 16 * FT_STAGES + 64)
#endif
#include <algorithm>
#include "ft_common.cuh"
#include "ft_wgmma.cuh"
#ifndef FT_HARNESS_CHAIN
#define FT_HARNESS_CHAIN 0
#endif
#ifndef FT_HARNESS_ITERS
#define FT_HARNESS_ITERS 10
#endif
#ifndef FT_HARNESS_NOSTORE
#define FT_HARNESS_NOSTORE 0
#endif
#if FT_HARNESS_NOSTORE
#define ft_plant_skips(n, pq) true  // every store left out (diagnostic; the check is skipped)
#endif
#if FT_HARNESS_CHAIN == 3
// A question, not a rendering: mish with ex2.approx and rcp.approx alone (9 instructions instead
// of ft_mish's 24): does the chain's cost inside the fused conv follow its instruction count?
__device__ __forceinline__ float ft_mish_approx(float v) {
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(fminf(v, 20.0f) * 1.44269504f));
  const float n = fmaf(e, e, e + e);
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(n + 2.0f));
  return v * (n * r);
}
__device__ __forceinline__ float ft_chain(float v, int, const float*) { return ft_mish_approx(ft_mish_approx(v)); }
__device__ __forceinline__ float ft_chain_pre(float v, int, const float*) { return ft_chain(v, 0, nullptr); }
static double ref_chain(double v) {
  for (int i = 0; i < 2; ++i) v = v * std::tanh(std::log1p(std::exp(v)));
  return v;
}
#elif FT_HARNESS_CHAIN == 2
#include "ft_math.cuh"
__device__ __forceinline__ float ft_chain(float v, int, const float*) { return ft_softplus(ft_gelu(v), 1.0f, 20.0f); }
__device__ __forceinline__ float ft_chain_pre(float v, int, const float*) { return ft_chain(v, 0, nullptr); }
static double ref_chain(double v) {
  v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
  return v > 20 ? v : std::log1p(std::exp(v));
}
#elif FT_HARNESS_CHAIN
#include "ft_math.cuh"
__device__ __forceinline__ float ft_chain(float v, int, const float*) { return ft_mish(ft_mish(v)); }
__device__ __forceinline__ float ft_chain_pre(float v, int, const float*) { return ft_mish(ft_mish(v)); }
static double ref_chain(double v) {
  for (int i = 0; i < 2; ++i) v = v * std::tanh(std::log1p(std::exp(v)));
  return v;
}
#else
__device__ __forceinline__ float ft_chain(float v, int, const float*) { return v * 2.0f; }
__device__ __forceinline__ float ft_chain_pre(float v, int, const float*) { return v * 2.0f; }
static double ref_chain(double v) { return v * 2; }
#endif
__device__ __forceinline__ float ft_chain_post(float v, int, const float*) { return v; }
__device__ __forceinline__ float ft_reduce_init() { return FT_INF; }
__device__ __forceinline__ float ft_reduce_step(float acc, float v) { return ft_min(acc, v); }
__device__ __forceinline__ float ft_reduce_finish(float acc) { return acc; }
#if defined(FT_HALO) && FT_HALO == 6
#include "ft_tf32.cuh"
#include "fused_conv_halo.cu"  // kernel_templates: the halo design (prototyped as v6; HALO=6 in a config)
#define FT_GRID_X (FT_TILES < 132 ? FT_TILES : 132)  // persistent: one block per SM of an H200
#elif defined(FT_HALO)
#include "halo_conv.cu"  // bench/fused_conv: the halo-tile prototype v5 (HALO=1; NCHW in and out only)
#else
#include "fused_conv.cu"
#endif

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); return 2; } } while (0)

int main() {
  const long long xe = (long long)FT_N * FT_C * FT_HW, we = (long long)FT_K * FT_C * FT_RS;
  const long long M = (long long)FT_N * FT_PQ;
  const long long oe = FT_REDUCE ? M : M * FT_K;
  std::vector<float> x(xe), w(we), b(FT_K), out(oe);
  srand(1);
  for (auto& v : x) v = rand() / (float)RAND_MAX * 2 - 1;
  for (auto& v : w) v = rand() / (float)RAND_MAX * 2 - 1;
  for (auto& v : b) v = rand() / (float)RAND_MAX * 2 - 1;
  float *dx, *dw, *dp, *db, *dout;
#if defined(FT_SPLIT) && FT_SPLIT
  const long long pe = (long long)FT_KN_PAD * FT_KG_PAD * 2;  // 3xTF32: big and small filter tiles
#else
  const long long pe = (long long)FT_KN_PAD * FT_KG_PAD;
#endif
  CK(cudaMalloc(&dx, xe * 4)); CK(cudaMalloc(&dw, we * 4)); CK(cudaMalloc(&dp, pe * 4));
  CK(cudaMalloc(&db, FT_K * 4)); CK(cudaMalloc(&dout, oe * 4));
  CK(cudaMemcpy(dx, x.data(), xe * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), we * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), FT_K * 4, cudaMemcpyHostToDevice));
  CK(cudaMemset(dout, 0xff, oe * 4));  // NaN poison
  ft_fused_conv_pack<<<(unsigned)((pe + 255) / 256), 256>>>(dw, dp);
  CK(cudaFuncSetAttribute(ft_fused_conv, cudaFuncAttributeMaxDynamicSharedMemorySize, FT_SMEM_BYTES));
#ifdef FT_GRID_X
  const unsigned grid = (unsigned)FT_GRID_X;
#else
  const unsigned grid = (unsigned)((M + FT_BM - 1) / FT_BM);
#endif
  ft_fused_conv<<<grid, FT_THREADS, FT_SMEM_BYTES>>>(dx, dp, dout, db);
  CK(cudaDeviceSynchronize());
  const int iters = FT_HARNESS_ITERS;
  std::vector<cudaEvent_t> ev(iters + 1);
  for (auto& e : ev) cudaEventCreate(&e);
  cudaEventRecord(ev[0]);
  for (int i = 0; i < iters; ++i) {
    ft_fused_conv<<<grid, FT_THREADS, FT_SMEM_BYTES>>>(dx, dp, dout, db);
    cudaEventRecord(ev[i + 1]);
  }
  CK(cudaEventSynchronize(ev[iters]));
  std::vector<float> each(iters);
  for (int i = 0; i < iters; ++i) cudaEventElapsedTime(&each[i], ev[i], ev[i + 1]);
  float total_ms = 0;
  cudaEventElapsedTime(&total_ms, ev[0], ev[iters]);
  const double ms = total_ms / iters;  // mean per launch
  if (iters >= 20) {
    const int tenth = iters / 10;
    double first = 0, last = 0;
    for (int i = 0; i < tenth; ++i) first += each[i], last += each[iters - 1 - i];
    std::vector<float> sorted = each;
    std::sort(sorted.begin(), sorted.end());
    printf("launches %d: median %.3f ms, first tenth %.3f, last tenth %.3f\n", iters, sorted[iters / 2],
           first / tenth, last / tenth);
  }
  CK(cudaMemcpy(out.data(), dout, oe * 4, cudaMemcpyDeviceToHost));
  // float64 reference on a sample of pixels (all of them when small)
  double worst = 0; long long bad = 0, checked = 0;
  const long long step = M > 20000 ? M / 20000 : 1;
  for (long long m = 0; m < M && !FT_HARNESS_NOSTORE; m += step) {
    const long long n = m / FT_PQ; const int pq = (int)(m % FT_PQ), p = pq / FT_Q, q = pq % FT_Q;
    double red = INFINITY;
    for (int k = 0; k < FT_K; ++k) {
      double acc = b[k], mag = 0;
      for (int c = 0; c < FT_C; ++c) for (int r = 0; r < FT_R; ++r) for (int s = 0; s < FT_S; ++s) {
        const int ih = p * FT_STRIDE_H - FT_PAD_H + r * FT_DIL_H, iw = q * FT_STRIDE_W - FT_PAD_W + s * FT_DIL_W;
        if (ih < 0 || ih >= FT_H || iw < 0 || iw >= FT_W) continue;
        const double xv = FT_IN_NHWC ? x[((n * FT_H + ih) * FT_W + iw) * FT_C + c] : x[((n * FT_C + c) * FT_H + ih) * FT_W + iw];
        const double wv = w[((k * FT_C + c) * FT_R + r) * FT_S + s];
        acc += xv * wv; mag += fabs(xv * wv);
      }
      const double ref = ref_chain(acc);
      if (FT_REDUCE) { red = fmin(red, ref); continue; }
      const float got = FT_OUT_NHWC ? out[m * FT_K + k] : out[(n * FT_K + k) * FT_PQ + pq];
      const double err = fabs(got - ref) / (2 * mag * 1e-3 + 1e-6);
      ++checked;
      if (!(err <= 1)) { if (bad++ < 8) printf("wrong m=%lld (n=%lld p=%d q=%d) k=%d got %g want %g\n", m, n, p, q, k, got, ref); }
      if (err > worst || err != err) worst = err;
    }
    if (FT_REDUCE) {
      const float got = out[m];
      ++checked;
      const double err = fabs(got - red) / (fabs(red) * 1e-2 + 1e-2);
      if (!(err <= 1)) { if (bad++ < 8) printf("wrong m=%lld got %g want %g\n", m, got, red); }
      if (err > worst || err != err) worst = err;
    }
  }
  const double flop = 2.0 * M * FT_K * FT_C * FT_RS;
  printf("%s: checked %lld, wrong %lld, worst %.3f of a loose bound; %.3f ms, %.1f TFLOP/s\n",
         bad ? "FAIL" : "ok", checked, bad, worst, ms, flop / (ms * 1e-3) / 1e12);
  return bad ? 1 : 0;
}
