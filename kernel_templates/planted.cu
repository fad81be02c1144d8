// fusetune: TEST-ONLY planted kernels (FUSETUNE_TEST_PLANT=fault|hang|tap, codegen/planted.cpp).
// They stand in for a generated epilogue kernel to prove that the tuner records a kernel that
// faults or never finishes, replaces its worker, and goes on, or they plant a subtle bug that
// verification must catch. Never part of a real search.
// Signature of the epilogue kernels: (in, out, chan).
#ifndef FT_GENERATED
#define FT_K 8
#define FT_C 4
#define FT_R 3
#define FT_S 3
#endif

// Writes far outside any allocation: CUDA_ERROR_ILLEGAL_ADDRESS, which kills the context.
extern "C" __global__ void ft_planted_fault(const float* in, float* out, const float* chan) {
  (void)in;
  (void)chan;
  out[(1ull << 40) + threadIdx.x] = 1.0f;
}

// Spins until the clock runs backwards, i.e. forever; only the worker's timeout ends it.
extern "C" __global__ void ft_planted_hang(const float* in, float* out, const float* chan) {
  (void)in;
  (void)chan;
  const long long start = clock64();
  while (clock64() >= start) {
  }
  out[threadIdx.x] = 0.0f;
}

// Burns about 10 ms (2e7 cycles at ~2 GHz) and writes nothing: appended to a stored winner's
// plan by `smoke` under FUSETUNE_TEST_STALE, it makes the winner slow but still correct, so
// the smoke test's "still beats the baselines" check must fail.
extern "C" __global__ void ft_planted_delay(const float* in, float* out, const float* chan) {
  (void)in;
  (void)out;
  (void)chan;
  const long long start = clock64();
  while (clock64() - start < 20000000ll) {
  }
}

// Copies the filters w (K, C, R, S) to w_out with one tap -- the centre tap of input channel
// C/2 -- zeroed for every output channel: a conv that skips one filter tap of one input channel.
// Launch: grid.x = ceil(K*C*R*S / 256), block.x = 256.
extern "C" __global__ void ft_planted_drop_tap(const float* w, float* w_out, const float* chan) {
  (void)chan;
  const long long total = (long long)FT_K * FT_C * FT_R * FT_S;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const long long tap = i % ((long long)FT_C * FT_R * FT_S);  // (c, r, s) within one output channel
  const long long dropped = ((long long)(FT_C / 2) * FT_R + FT_R / 2) * FT_S + FT_S / 2;
  w_out[i] = tap == dropped ? 0.0f : w[i];
}
