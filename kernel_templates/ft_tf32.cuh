// fusetune: TF32 rounding in integer instructions, written once for the device (the fused-conv
// halo template; a generated source pastes this file in front of it) and for the host (the
// GPU-free proof, tests/tf32_rounding_test.cpp, includes it).
#ifndef FT_TF32_CUH
#define FT_TF32_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FT_TF32_HD __device__ __forceinline__
#else
#define FT_TF32_HD inline
#endif

// fp32 bits -> TF32 bits as cvt.rna.tf32.f32 rounds (nearest, ties away from zero; finite values
// past the largest TF32 round to infinity). The halo warps round their whole buffer with it:
// cvt.rna in that loop made ptxas spill under their register budget. A NaN stays a NaN (quiet
// bit set: wgmma reads only the top 19 bits, which would turn a NaN with a low payload into an
// infinity). Proved on every 4093rd fp32 pattern and at the edges by tests/tf32_rounding_test.cpp.
FT_TF32_HD unsigned ft_tf32_bits(unsigned u) {
  return (u & 0x7fffffffu) > 0x7f800000u ? (u | 0x00400000u) : (u + 0x1000u) & 0xffffe000u;
}

#endif  // FT_TF32_CUH
