// Prototype v6 of the halo-tile fused conv (v5: halo_conv.cu, kept for comparison; the harness
// takes this file with -DFT_HALO=6). Same GEMM as v5 (K order: 32-channel chunk, r, s, channel;
// TP x TQ = 128 output pixels per tile, consumer warpgroup i owns pixels 64i .. 64i+63, A from
// registers). v5 was issue-bound (~30 SASS instructions per 4-byte halo element in the producer,
// 3 per element per tap for cvt.rna in the consumers); v6 moves that work out of the hot loops:
//  - halo by 16-byte cp.async (8/4-byte when W is not a multiple of 4) into a window whose first
//    column is aligned to the vector; the consumers add the tile's misalignment to their pixel
//    offsets. Addresses advance by carries on compile-time steps: no divisions per element.
//  - TF32 rounding once per halo element (not once per tap): after the copies land, the halo
//    warps round the buffer in place with an integer add and mask (round half away from zero,
//    as cvt.rna), so the consumers feed raw shared-memory words to wgmma.
//  - filter tiles are packed already swizzled, one contiguous block per K tile, and arrive by one
//    cp.async.bulk per tile (mbarrier transaction count): one thread, a handful of instructions.
//  - warp roles: producer warp 0 streams filter tiles, warps 1-3 the halo, each on its own
//    barriers, so the halo of chunk c+1 is in flight while the consumers run the taps of chunk c.
//  - persistent: gridDim.x <= SMs, tiles strided over blocks, so the next tile's halo and filters
//    load under this tile's last taps and epilogue (v5 exposed both at every block start).
//  - bias and per-channel parameters staged once per block in shared memory.
//  - setmaxnreg: producers drop to FT_REGS_P registers, consumers rise to FT_REGS_C.
// Needs sm_90a. Launch: grid.x = FT_GRID_X, block 384, dynamic shared memory FT_SMEM_BYTES.
#if FT_TP * FT_TQ != 128
#error "halo_conv_v6.cu: FT_TP * FT_TQ must be 128"
#endif

template <int N> __device__ __forceinline__ void ft_wgmma_rs(float* d, const unsigned* a, unsigned long long db);
template <> __device__ __forceinline__ void ft_wgmma_rs<32>(float* d, const unsigned* a, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
      "}, {%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}
template <> __device__ __forceinline__ void ft_wgmma_rs<64>(float* d, const unsigned* a, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}
template <> __device__ __forceinline__ void ft_wgmma_rs<128>(float* d, const unsigned* a, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}
template <> __device__ __forceinline__ void ft_wgmma_rs<256>(float* d, const unsigned* a, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));
}

#define FT_BM 128
#define FT_CONSUMERS 2
#define FT_THREADS 384
#define FT_CC 32                                        // channels per chunk
#define FT_KG (FT_C * FT_RS)
#define FT_CHUNKS ((FT_C + FT_CC - 1) / FT_CC)
#define FT_KT (FT_CHUNKS * FT_RS)                       // K tiles: one tap of one chunk each
#define FT_KG_PAD (FT_KT * 32)
#define FT_NT ((FT_K + FT_BN - 1) / FT_BN)
#define FT_KN_PAD (FT_NT * FT_BN)
#define FT_HR ((FT_TP - 1) * FT_STRIDE_H + (FT_R - 1) * FT_DIL_H + 1)  // halo rows
#define FT_HC ((FT_TQ - 1) * FT_STRIDE_W + (FT_S - 1) * FT_DIL_W + 1)  // halo columns used
// Vector width of the halo copies: a vector never straddles the image's edge (rows start at a
// multiple of W, and the window starts at a multiple of the width), so it is all in or all out.
#define FT_VW ((FT_W % 4 == 0) ? 4 : (FT_W % 2 == 0) ? 2 : 1)
// Vectors per halo row: the window starts up to FT_VW - 1 columns before the first used one.
#define FT_HCV ((FT_HC + 2 * (FT_VW - 1)) / FT_VW)
#define FT_HCP (FT_HCV * FT_VW)                          // floats per halo row
// Floats per halo channel, padded to 8 mod 32 as in v5 (a warp's A loads, 8 pixels x 4
// channels, hit 32 banks); a multiple of 4, so 16-byte vectors stay aligned.
#define FT_CHS ((FT_HR * FT_HCP + 23) / 32 * 32 + 8)
#define FT_HALO_BYTES (FT_CC * FT_CHS * 4)
#define FT_HVEC (FT_CC * FT_HR * FT_HCV)                 // copies per chunk
#define FT_HTHREADS 96                                   // producer warps 1-3
#define FT_HITER ((FT_HVEC + FT_HTHREADS - 1) / FT_HTHREADS)
#define FT_RVEC (FT_HALO_BYTES / 16)                     // 16-byte words of the rounding pass
#define FT_RITER ((FT_RVEC + FT_HTHREADS - 1) / FT_HTHREADS)
#define FT_B_BYTES (FT_BN * 128)
#define FT_EPI_PITCH 68
#if FT_REDUCE
#define FT_EPI_BYTES 0
#else
#define FT_EPI_BYTES (FT_CONSUMERS * 32 * FT_EPI_PITCH * 4)
#endif
#define FT_CHAN_BYTES ((FT_CHAN_FLOATS * 4 + 15) / 16 * 16)
#define FT_TILES_P ((FT_P + FT_TP - 1) / FT_TP)
#define FT_TILES_Q ((FT_Q + FT_TQ - 1) / FT_TQ)
#define FT_TILES ((long long)FT_N * FT_TILES_P * FT_TILES_Q)
#ifndef FT_SMS
#define FT_SMS 132  // H100 SXM / H200
#endif
#define FT_GRID_X (FT_TILES < FT_SMS ? FT_TILES : FT_SMS)
// [B stages, 1024-aligned][halo x 2][epilogue][channel vectors][barriers]
#define FT_SMEM_NEEDED \
  (1024 + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES + FT_CHAN_BYTES + 16 * (FT_STAGES + 2) + 64)
#define FT_SMEM_BYTES FT_SMEM_NEEDED
static_assert(FT_SMEM_NEEDED <= 232448, "halo_conv_v6.cu: shared memory over 227 KiB: fewer stages or another tile");
#ifndef FT_REGS_P
#define FT_REGS_P 40
#endif
#ifndef FT_REGS_C
#define FT_REGS_C 232
#endif
static_assert(128 * FT_REGS_P + 256 * FT_REGS_C <= 65536, "setmaxnreg: register file over-committed");

// Filters (K, C, R, S) -> one contiguous FT_BN x 128-byte block per (column tile, K tile), in
// (chunk, r, s, c mod 32) K order, TF32-rounded, 16-byte chunks already in the 128-byte swizzle
// (chunk j of row n at j ^ (n % 8)), so a stage is one bulk copy.
extern "C" __global__ void __launch_bounds__(256) ft_fused_conv_pack(const float* __restrict__ w,
                                                                     float* __restrict__ wpack) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)FT_KN_PAD * FT_KG_PAD) return;
  const long long blk = i / (FT_BN * 32);
  const int within = (int)(i % (FT_BN * 32));
  const int nt = (int)(blk / FT_KT), kt = (int)(blk % FT_KT);
  const int row = within >> 5, j = within & 31;
  const int kl = ((((j >> 2) ^ row) & 7) << 2) | (j & 3);
  const int tap = kt % FT_RS, chunk = kt / FT_RS;
  const int n = nt * FT_BN + row, c = chunk * FT_CC + kl;
  wpack[i] = (n < FT_K && c < FT_C) ? ft_tf32(w[((long long)n * FT_C + c) * FT_RS + tap]) : 0.0f;
}

// Bias and the pre-reduction (or whole) chain on one accumulator of output channel k; chan is
// the block's shared-memory copy.
__device__ __forceinline__ float ft_epilogue_value(float v, int k, const float* chan) {
#if FT_HAS_BIAS
  v += chan[k];
#endif
#if FT_REDUCE
  return ft_chain_pre(v, k, chan);
#else
  return ft_chain(v, k, chan);
#endif
}

// Same rounding as cvt.rna.tf32.f32 (nearest, ties away) for finite values and infinities, in
// two integer instructions (cvt.rna is three in SASS: a compare, a predicated add, a mask).
__device__ __forceinline__ unsigned ft_tf32_bits(unsigned u) { return (u + 0x1000u) & 0xffffe000u; }

template <int BYTES> __device__ __forceinline__ void ft_cp_async_zfill(unsigned dst, const void* src, bool valid);
template <> __device__ __forceinline__ void ft_cp_async_zfill<16>(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
template <> __device__ __forceinline__ void ft_cp_async_zfill<8>(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 8 : 0) : "memory");
}
template <> __device__ __forceinline__ void ft_cp_async_zfill<4>(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}
__device__ __forceinline__ void ft_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ft_bulk_g2s(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
template <int N> __device__ __forceinline__ void ft_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void ft_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// Tile index -> image, first output row, first output column.
__device__ __forceinline__ void ft_tile_coords(long long tile, long long& n, int& tp0, int& tq0) {
  tq0 = (int)(tile % FT_TILES_Q) * FT_TQ;
  tile /= FT_TILES_Q;
  tp0 = (int)(tile % FT_TILES_P) * FT_TP;
  n = tile / FT_TILES_P;
}

extern "C" __global__ void __launch_bounds__(FT_THREADS, 1)
    ft_fused_conv(const float* __restrict__ x, const float* __restrict__ wpack, float* __restrict__ out,
                  const float* __restrict__ chan) {
  extern __shared__ __align__(1024) unsigned char ft_smem_raw[];
  const unsigned raw = (unsigned)__cvta_generic_to_shared(ft_smem_raw);
  const unsigned smem0 = (raw + 1023u) & ~1023u;
  unsigned char* const base = ft_smem_raw + (smem0 - raw);
  float* const halo_ptr = reinterpret_cast<float*>(base + FT_STAGES * FT_B_BYTES);
  const unsigned halo0 = smem0 + FT_STAGES * FT_B_BYTES;
  float* const epi_all = reinterpret_cast<float*>(base + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES);
  float* const chan_s = reinterpret_cast<float*>(base + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES);
  const unsigned bars = smem0 + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES + FT_CHAN_BYTES;
  const unsigned b_full = bars, b_empty = bars + 8 * FT_STAGES;
  const unsigned h_full = bars + 16 * FT_STAGES, h_empty = h_full + 16;
  if (threadIdx.x == 0) {
    for (int s = 0; s < FT_STAGES; ++s) {
      ft_mbar_init(b_full + 8 * s, 1);
      ft_mbar_init(b_empty + 8 * s, 4 * FT_CONSUMERS);
    }
    for (int h = 0; h < 2; ++h) {
      ft_mbar_init(h_full + 8 * h, FT_HTHREADS);
      ft_mbar_init(h_empty + 8 * h, 4 * FT_CONSUMERS);
    }
    // the bulk copies (async proxy) signal these barriers
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  for (int i = (int)threadIdx.x; i < FT_CHAN_FLOATS; i += FT_THREADS) chan_s[i] = chan[i];
  __syncthreads();

  const int wg = (int)threadIdx.x / 128;
  if (wg == 0) {
    ft_setmaxnreg_dec<FT_REGS_P>();
    const int warp = (int)threadIdx.x >> 5;
    if (warp == 0) {
      // ---- filter tiles: one bulk copy per K tile ----
      if (threadIdx.x != 0) return;
      int stage = 0;
      unsigned phase = 0;
      for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
        for (int nt = 0; nt < FT_NT; ++nt) {
          const float* src = wpack + (long long)nt * FT_KT * FT_BN * 32;
          for (int kt = 0; kt < FT_KT; ++kt) {
            ft_mbar_wait(b_empty + 8 * stage, phase ^ 1);
            ft_mbar_expect_tx(b_full + 8 * stage, FT_B_BYTES);
            ft_bulk_g2s(smem0 + stage * FT_B_BYTES, src + kt * FT_BN * 32, FT_B_BYTES, b_full + 8 * stage);
            if (++stage == FT_STAGES) {
              stage = 0;
              phase ^= 1;
            }
          }
        }
      }
      return;
    }
    // ---- halo: warps 1-3 ----
    const int ht = (int)threadIdx.x - 32;
    // This thread's first copy (channel, halo row, vector); later ones follow by compile-time
    // steps of FT_HTHREADS copies with carries, the same sequence for every chunk.
    const int v_first = ht % FT_HCV, row_first = ht / FT_HCV;
    const int hr_first = row_first % FT_HR, cl_first = row_first / FT_HR;
    constexpr int DV = FT_HTHREADS % FT_HCV, DROW = FT_HTHREADS / FT_HCV;
    constexpr int DHR = DROW % FT_HR, DCL = DROW / FT_HR;
    int ci = 0;
    for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
      long long n;
      int tp0, tq0;
      ft_tile_coords(tile, n, tp0, tq0);
      const int ih0 = tp0 * FT_STRIDE_H - FT_PAD_H;
      const int iw0 = tq0 * FT_STRIDE_W - FT_PAD_W;
      const int iwa = iw0 & -FT_VW;  // window start: floor to the vector width, negatives too
      for (int nt = 0; nt < FT_NT; ++nt) {
        for (int ch = 0; ch < FT_CHUNKS; ++ch, ++ci) {
          const int h = ci & 1;
          ft_mbar_wait(h_empty + 8 * h, ((ci >> 1) & 1) ^ 1);
          const unsigned hb = halo0 + h * FT_HALO_BYTES;
          const float* const xc = x + (n * FT_C + ch * FT_CC) * (long long)FT_HW;
          // running image row/column of the copy and its offsets in x (from xc) and in the halo
          int iwv = iwa + v_first * FT_VW, ihv = ih0 + hr_first, cl = cl_first;
          int goff = cl * FT_HW + ihv * FT_W + iwv;
          int soff = cl * FT_CHS + hr_first * FT_HCP + v_first * FT_VW;
          const int iw_end = iwa + FT_HCP, ih_end = ih0 + FT_HR;
#pragma unroll 4
          for (int j = 0; j < FT_HITER; ++j) {
            if (FT_HVEC % FT_HTHREADS == 0 || cl < FT_CC) {
              const bool ok = (FT_C % FT_CC == 0 || ch * FT_CC + cl < FT_C) && (unsigned)ihv < (unsigned)FT_H &&
                              (unsigned)iwv < (unsigned)FT_W;
              // a zero-filled copy still names a mapped address: the chunk's first element
              ft_cp_async_zfill<4 * FT_VW>(hb + 4 * soff, xc + (ok ? goff : 0), ok);
            }
            iwv += DV * FT_VW;
            goff += DV * FT_VW;
            soff += DV * FT_VW;
            const bool cv = iwv >= iw_end;  // past the row's last vector: to the next row
            if (cv) {
              iwv -= FT_HCP;
              goff += FT_W - FT_HCP;  // soff: -FT_HCP for the column, +FT_HCP for the row
              ++ihv;
            }
            ihv += DHR;
            goff += DHR * FT_W;
            soff += DHR * FT_HCP;
            const bool chr = ihv >= ih_end;  // past the halo's last row: to the next channel
            if (chr) {
              ihv -= FT_HR;
              goff += FT_HW - FT_HR * FT_W;
              soff += FT_CHS - FT_HR * FT_HCP;
              ++cl;
            }
            cl += DCL;
            goff += DCL * FT_HW;
            soff += DCL * FT_CHS;
          }
          ft_cp_async_commit();  // wait_group counts committed groups only
          ft_cp_async_wait<0>();
          // every halo thread's copies have landed: round the whole buffer in place
          asm volatile("bar.sync 3, %0;\n" ::"n"(FT_HTHREADS) : "memory");
          uint4* const hv = reinterpret_cast<uint4*>(halo_ptr + h * (FT_HALO_BYTES / 4));
#pragma unroll 4
          for (int j = 0; j < FT_RITER; ++j) {
            const int i = ht + FT_HTHREADS * j;
            if (FT_RVEC % FT_HTHREADS == 0 || i < FT_RVEC) {
              uint4 u = hv[i];
              u.x = ft_tf32_bits(u.x);
              u.y = ft_tf32_bits(u.y);
              u.z = ft_tf32_bits(u.z);
              u.w = ft_tf32_bits(u.w);
              hv[i] = u;
            }
          }
          ft_mbar_arrive(h_full + 8 * h);
        }
      }
    }
    return;
  }

  // ---- consumers ---------------------------------------------------------------------------------
  ft_setmaxnreg_inc<FT_REGS_C>();
  const int c = wg - 1;
  const int tid = (int)threadIdx.x - 128 * wg;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
  const int row0 = 16 * warp + g;  // rows row0, row0 + 8 of this warpgroup's 64
  // halo offsets (before the tile's misalignment) of the two pixels this thread feeds to the
  // MMAs, with this thread's channel tq folded in
  int pixb[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int m = 64 * c + row0 + 8 * hf;
    pixb[hf] = tq * FT_CHS + (m / FT_TQ) * FT_STRIDE_H * FT_HCP + (m % FT_TQ) * FT_STRIDE_W;
  }
  const unsigned long long desc0 = ft_smem_desc(smem0);
  int stage = 0;
  unsigned phase = 0;
  int ci = 0;
  float acc[FT_BN / 2];
  for (long long tile = blockIdx.x; tile < FT_TILES; tile += gridDim.x) {
    long long n;
    int tp0, tq0;
    ft_tile_coords(tile, n, tp0, tq0);
    const int iw0 = tq0 * FT_STRIDE_W - FT_PAD_W;
    const int mis = iw0 - (iw0 & -FT_VW);
    const int pix0 = pixb[0] + mis, pix1 = pixb[1] + mis;
#if FT_REDUCE
    float red0 = ft_reduce_init(), red1 = ft_reduce_init();
#endif
    for (int nt = 0; nt < FT_NT; ++nt) {
#pragma unroll
      for (int i = 0; i < FT_BN / 2; ++i) acc[i] = 0.0f;
      for (int ch = 0; ch < FT_CHUNKS; ++ch, ++ci) {
        const int h = ci & 1;
        ft_mbar_wait(h_full + 8 * h, (ci >> 1) & 1);
        const float* const hv0 = halo_ptr + h * (FT_HALO_BYTES / 4) + pix0;
        const float* const hv1 = halo_ptr + h * (FT_HALO_BYTES / 4) + pix1;
        unsigned a[2][4][4];
#pragma unroll
        for (int tap = 0; tap < FT_RS; ++tap) {
          const int r = tap / FT_S, s = tap % FT_S;
          const int toff = r * FT_DIL_H * FT_HCP + s * FT_DIL_W;
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) {
            const int o = 8 * ks * FT_CHS + toff;
            a[tap & 1][ks][0] = __float_as_uint(hv0[o]);
            a[tap & 1][ks][1] = __float_as_uint(hv1[o]);
            a[tap & 1][ks][2] = __float_as_uint(hv0[o + 4 * FT_CHS]);
            a[tap & 1][ks][3] = __float_as_uint(hv1[o + 4 * FT_CHS]);
          }
          ft_mbar_wait(b_full + 8 * stage, phase);
          // descriptor start address field is (addr >> 4): stage and 32-byte K steps add there
          const unsigned long long db = desc0 + (unsigned)((stage * FT_B_BYTES) >> 4);
          ft_wgmma_fence();
#pragma unroll
          for (int ks = 0; ks < 4; ++ks) ft_wgmma_rs<FT_BN>(acc, a[tap & 1][ks], db + 2 * ks);
          ft_wgmma_commit();
          ft_wgmma_wait<1>();
          // the previous tap's MMAs are done: its stage goes back to the producer
          if (tap > 0 && lane == 0) ft_mbar_arrive(b_empty + 8 * (stage == 0 ? FT_STAGES - 1 : stage - 1));
          if (++stage == FT_STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
        ft_wgmma_wait<0>();
        if (lane == 0) {
          ft_mbar_arrive(b_empty + 8 * (stage == 0 ? FT_STAGES - 1 : stage - 1));
          ft_mbar_arrive(h_empty + 8 * h);
        }
      }

      // ---- epilogue for column tile nt ----
#if FT_REDUCE
#pragma unroll
      for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int k = nt * FT_BN + 8 * i + 2 * tq + hh;
          if (FT_K % FT_BN == 0 || k < FT_K) {
            red0 = ft_reduce_step(red0, ft_epilogue_value(acc[4 * i + hh], k, chan_s));
            red1 = ft_reduce_step(red1, ft_epilogue_value(acc[4 * i + 2 + hh], k, chan_s));
          }
        }
      }
#else
      float* const epi = epi_all + c * 32 * FT_EPI_PITCH;
#pragma unroll
      for (int cb = 0; cb < FT_BN / 32; ++cb) {
#pragma unroll
        for (int i = 4 * cb; i < 4 * cb + 4; ++i) {
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            const int col = 8 * i + 2 * tq + hh;
            const int k = nt * FT_BN + col;
            if (FT_K % FT_BN == 0 || k < FT_K) {
              epi[(col - 32 * cb) * FT_EPI_PITCH + row0] = ft_epilogue_value(acc[4 * i + hh], k, chan_s);
              epi[(col - 32 * cb) * FT_EPI_PITCH + row0 + 8] = ft_epilogue_value(acc[4 * i + 2 + hh], k, chan_s);
            }
          }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
        {
          const int px = tid & 63;
          const int m = 64 * c + px;
          const int p = tp0 + m / FT_TQ, q = tq0 + m % FT_TQ;
          if (p < FT_P && q < FT_Q) {
            float* const dst = out + n * FT_K * FT_PQ + (long long)p * FT_Q + q;
#pragma unroll 4
            for (int chn = tid >> 6; chn < 32; chn += 2) {
              const int k = nt * FT_BN + 32 * cb + chn;
              if (FT_K % FT_BN == 0 || k < FT_K) dst[(long long)k * FT_PQ] = epi[chn * FT_EPI_PITCH + px];
            }
          }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
      }
#endif
    }
#if FT_REDUCE
#pragma unroll
    for (int off = 1; off < 4; off *= 2) {
      red0 = ft_reduce_step(red0, __shfl_xor_sync(0xffffffffu, red0, off));
      red1 = ft_reduce_step(red1, __shfl_xor_sync(0xffffffffu, red1, off));
    }
    if (tq == 0) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int m = 64 * c + row0 + 8 * hf;
        const int p = tp0 + m / FT_TQ, q = tq0 + m % FT_TQ;
        if (p < FT_P && q < FT_Q) out[n * FT_PQ + (long long)p * FT_Q + q] = ft_chain_post(ft_reduce_finish(hf ? red1 : red0), 0, chan_s);
      }
    }
#endif
  }
  (void)epi_all;
}
