// Device-side input generation and buffer guards for verification on full-size problems,
// where drawing gigabytes on the host and copying them over would cost seconds per draw.
//
// ft_fill_uniform: element i depends only on (seed, i) (a counter-based generator), so a
//   draw is deterministic whatever the grid, and one element can be recomputed on the host.
//   Values lie in [lo, hi) and are never 0 (a zero input hides a missing term): element i is
//   lo + (hi - lo) * u, u an odd multiple of 2^-25 in (0, 1), computed in double and rounded
//   to fp32 once. For lo = 0 that is never 0; for lo = -hi it is an odd multiple of hi*2^-24,
//   never 0 either. Other ranges that contain 0 may round onto it; those values are replaced
//   by hi * 2^-25 (positive, below hi).
// ft_fill_u32 / ft_check_u32: write a pattern (the NaN sentinel before a verification run, the
//   guard band after a buffer) and count the elements that no longer hold it.
// ft_spin: a busy wait of a given device time (GpuReference::spin).
//
// All kernels are grid-stride loops: any grid is correct, the host picks one that fills the GPU.

__device__ __forceinline__ unsigned long long ft_splitmix64_mix(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The i-th output of SplitMix64 seeded with mix(seed): hashing the seed first keeps nearby
// seeds (s, s+1) from giving shifted copies of one sequence.
__device__ __forceinline__ unsigned long long ft_random_u64(unsigned long long seed, unsigned long long i) {
  const unsigned long long gamma = 0x9E3779B97F4A7C15ull;
  return ft_splitmix64_mix(ft_splitmix64_mix(seed + gamma) + (i + 1) * gamma);
}

extern "C" __global__ void ft_fill_uniform(float* __restrict__ p, unsigned long long n,
                                           unsigned long long seed, float lo, float hi) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const double dlo = lo;
  const double span = (double)hi - (double)lo;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned long long top24 = ft_random_u64(seed, i) >> 40;
    const double u = (double)(2 * top24 + 1) * 0x1p-25;
    float v = (float)(dlo + span * u);
    if (v >= hi) v = nextafterf(hi, lo);  // rounding to nearest may land on hi itself
    if (v == 0.0f) v = hi * 0x1p-25f;
    p[i] = v;
  }
}

extern "C" __global__ void ft_fill_u32(unsigned* __restrict__ p, unsigned long long n, unsigned v) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = v;
  }
}

// *bad_count += number of elements != v. The caller zeroes *bad_count first.
extern "C" __global__ void ft_check_u32(const unsigned* __restrict__ p, unsigned long long n, unsigned v,
                                        unsigned long long* bad_count) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long bad = 0;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    bad += p[i] != v;
  }
  // One atomic per warp, and only from warps that found something.
  for (int offset = 16; offset > 0; offset /= 2) bad += __shfl_down_sync(0xffffffffu, bad, offset);
  if ((threadIdx.x & 31) == 0 && bad != 0) atomicAdd(bad_count, bad);
}

// Busy-waits about `ns` nanoseconds of device time, read from %globaltimer (ns since an epoch,
// updated every microsecond or so). GpuReference::spin puts it in front of a timed region so
// the host has enqueued the whole region before the GPU reaches its first event. Launch one
// thread; `volatile` asm keeps the timer read inside the loop.
__device__ __forceinline__ unsigned long long ft_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

extern "C" __global__ void ft_spin(unsigned long long ns) {
  const unsigned long long start = ft_globaltimer();
  while (ft_globaltimer() - start < ns) {
  }
}
