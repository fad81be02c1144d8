// fusetune: TEST-ONLY planted kernels (FUSETUNE_TEST_PLANT=fault|hang, codegen/planted.cpp).
// They stand in for a generated epilogue kernel to prove that the tuner records a kernel that
// faults or never finishes, replaces its worker, and goes on. Never part of a real search.
// Signature of the epilogue kernels: (in, out, chan).

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
