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
