// Prototype (bench/fused_conv, not yet a fusetune template) of the next fused-conv version:
// the input tile with its halo is loaded ONCE per 32-channel chunk and every filter tap reads
// it from a shifted shared-memory view; the A operand goes to wgmma from registers (RS form),
// rounded to TF32 on the way. Compared with fused_conv.cu (one 4-byte request per im2col
// element, R*S requests per input value) this issues about R*S times fewer input requests,
// each a run of consecutive columns, and needs no rounding pass.
//
// Tile: FT_TP output rows x FT_TQ output columns of one image (FT_TP * FT_TQ = 128 pixels,
// consumer warpgroup i owns pixels 64i .. 64i+63 in row-major order), all FT_BN channels of a
// column tile. GEMM K order: (32-channel chunk, r, s, channel in chunk): a K tile of 32 is one
// tap of one chunk, so the packed filters are (KN_PAD, CHUNKS * R * S * 32), zero-padded.
// Block: warpgroup 0 produces (halo by 4-byte cp.async, zero-filled outside the image; filter
// tiles through registers), warpgroups 1, 2 consume. Launch: grid.x = N * ceil(P/TP) *
// ceil(Q/TQ), block 384, dynamic shared memory FT_SMEM_NEEDED. Needs sm_90a.
#if FT_TP * FT_TQ != 128
#error "halo_conv.cu: FT_TP * FT_TQ must be 128"
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
#define FT_HC ((FT_TQ - 1) * FT_STRIDE_W + (FT_S - 1) * FT_DIL_W + 1)  // halo columns
// Floats per halo channel, padded to 8 mod 32: the four channels a quad reads land 8 banks
// apart, so a warp's A loads (8 pixels x 4 channels) hit 32 banks.
#define FT_CHS ((FT_HR * FT_HC + 23) / 32 * 32 + 8)
#define FT_HALO_BYTES (FT_CC * FT_CHS * 4)
#define FT_B_BYTES (FT_BN * 128)
#define FT_EPI_PITCH 68
#define FT_EPI_BYTES (FT_CONSUMERS * 32 * FT_EPI_PITCH * 4)
#define FT_TILES_P ((FT_P + FT_TP - 1) / FT_TP)
#define FT_TILES_Q ((FT_Q + FT_TQ - 1) / FT_TQ)
#define FT_GRID_X ((long long)FT_N * FT_TILES_P * FT_TILES_Q)
// [B stages, 1024-aligned][halo x 2][epilogue][barriers]
#define FT_SMEM_NEEDED (1024 + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES + 16 * (FT_STAGES + 2) + 64)
#define FT_SMEM_BYTES FT_SMEM_NEEDED

// Filters (K, C, R, S) -> (KN_PAD, KG_PAD) in (chunk, r, s, c mod 32) order, TF32-rounded.
extern "C" __global__ void __launch_bounds__(256) ft_fused_conv_pack(const float* __restrict__ w,
                                                                     float* __restrict__ wpack) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= (long long)FT_KN_PAD * FT_KG_PAD) return;
  const int n = (int)(i / FT_KG_PAD);
  const int kk = (int)(i % FT_KG_PAD);
  const int cl = kk & 31;
  const int tap = (kk >> 5) % FT_RS;
  const int chunk = (kk >> 5) / FT_RS;
  const int c = chunk * FT_CC + cl;
  wpack[i] = (n < FT_K && c < FT_C) ? ft_tf32(w[((long long)n * FT_C + c) * FT_RS + tap]) : 0.0f;
}

// Bias and the pre-reduction (or whole) chain on one accumulator of output channel k.
__device__ __forceinline__ float ft_epilogue_value(float v, int k, const float* __restrict__ chan) {
#if FT_HAS_BIAS
  v += chan[k];
#endif
#if FT_REDUCE
  return ft_chain_pre(v, k, chan);
#else
  return ft_chain(v, k, chan);
#endif
}

__device__ __forceinline__ void ft_cp_async_mbar_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Filter tiles in flight per producer thread; FT_STAGES - 2 is the most that cannot deadlock.
#define FT_LAG (FT_STAGES - 2)

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
  const unsigned bars = smem0 + FT_STAGES * FT_B_BYTES + 2 * FT_HALO_BYTES + FT_EPI_BYTES;
  const unsigned b_full = bars, b_empty = bars + 8 * FT_STAGES;
  const unsigned h_full = bars + 16 * FT_STAGES, h_empty = h_full + 16;
  if (threadIdx.x == 0) {
    for (int s = 0; s < FT_STAGES; ++s) {
      ft_mbar_init(b_full + 8 * s, 128);
      ft_mbar_init(b_empty + 8 * s, 4 * FT_CONSUMERS);
    }
    for (int h = 0; h < 2; ++h) {
      ft_mbar_init(h_full + 8 * h, 128);
      ft_mbar_init(h_empty + 8 * h, 4 * FT_CONSUMERS);
    }
  }
  __syncthreads();

  long long tile = blockIdx.x;
  const int tq0 = (int)(tile % FT_TILES_Q) * FT_TQ;
  tile /= FT_TILES_Q;
  const int tp0 = (int)(tile % FT_TILES_P) * FT_TP;
  const long long n = tile / FT_TILES_P;
  const int wg = (int)threadIdx.x / 128;

  if (wg == 0) {
    // ---- producer ------------------------------------------------------------------------------
    const int t = (int)threadIdx.x;
    const int ih0 = tp0 * FT_STRIDE_H - FT_PAD_H;
    const int iw0 = tq0 * FT_STRIDE_W - FT_PAD_W;
    const float* const xn = x + n * FT_C * FT_HW;
    // Filter tiles by 16-byte cp.async, FT_LAG tiles in flight per thread; a tile is published
    // (fenced for wgmma's async proxy, then `full`) once this thread's copies of it landed.
    int it = 0;
    const auto publish = [&](int pub) {
      ft_fence_proxy_async();
      ft_mbar_arrive(b_full + 8 * (pub % FT_STAGES));
    };
    for (int nt = 0; nt < FT_NT; ++nt) {
      for (int ch = 0; ch < FT_CHUNKS; ++ch) {
        const int ci = nt * FT_CHUNKS + ch;
        const int h = ci & 1;
        ft_mbar_wait(h_empty + 8 * h, ((ci >> 1) & 1) ^ 1);
        const unsigned hb = halo0 + h * FT_HALO_BYTES;
        // Lanes run along a halo row: each warp instruction reads consecutive columns.
        for (int e = t; e < FT_CC * FT_HR * FT_HC; e += 128) {
          const int cl = e / (FT_HR * FT_HC);
          const int rem = e - cl * (FT_HR * FT_HC);
          const int hr = rem / FT_HC;
          const int hc = rem - hr * FT_HC;
          const int c = ch * FT_CC + cl;
          const int ih = ih0 + hr, iw = iw0 + hc;
          const bool ok = c < FT_C && (unsigned)ih < (unsigned)FT_H && (unsigned)iw < (unsigned)FT_W;
          ft_cp_async4(hb + 4 * (cl * FT_CHS + rem), ok ? xn + (long long)c * FT_HW + ih * FT_W + iw : x, ok);
        }
        ft_cp_async_mbar_arrive(h_full + 8 * h);
        for (int tap = 0; tap < FT_RS; ++tap, ++it) {
          const int kt = ch * FT_RS + tap;
          const int stage = it % FT_STAGES;
          ft_mbar_wait(b_empty + 8 * stage, ((it / FT_STAGES) & 1) ^ 1);
          const unsigned b_s = smem0 + stage * FT_B_BYTES;
          const float* wsrc = wpack + (long long)nt * FT_BN * FT_KG_PAD + kt * 32;
#pragma unroll
          for (int u = 0; u < FT_BN * 8 / 128; ++u) {
            const int idx = t + 128 * u;
            const int row = idx >> 3, c16 = idx & 7;
            ft_cp_async16(b_s + row * 128 + (((c16 ^ row) & 7) << 4), wsrc + (long long)row * FT_KG_PAD + c16 * 4);
          }
          ft_cp_async_commit();
          if (it >= FT_LAG) {
            ft_cp_async_wait<FT_LAG>();
            publish(it - FT_LAG);
          }
        }
      }
    }
    ft_cp_async_wait<0>();
    for (int pub = it > FT_LAG ? it - FT_LAG : 0; pub < it; ++pub) publish(pub);
    return;
  }

  // ---- consumers ---------------------------------------------------------------------------------
  const int c = wg - 1;
  const int tid = (int)threadIdx.x - 128 * wg;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, tq = lane & 3;
  const int row0 = 16 * warp + g;  // rows row0, row0 + 8 of this warpgroup's 64
  // halo offsets of the two pixels this thread feeds to the MMAs
  int pix[2];
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int m = 64 * c + row0 + 8 * hf;
    pix[hf] = (m / FT_TQ) * FT_STRIDE_H * FT_HC + (m % FT_TQ) * FT_STRIDE_W;
  }
#if FT_REDUCE
  float red0 = ft_reduce_init(), red1 = ft_reduce_init();
  (void)epi_all;
#endif
  float acc[FT_BN / 2];
  int it = 0;
  for (int nt = 0; nt < FT_NT; ++nt) {
#pragma unroll
    for (int i = 0; i < FT_BN / 2; ++i) acc[i] = 0.0f;
    for (int ch = 0; ch < FT_CHUNKS; ++ch) {
      const int ci = nt * FT_CHUNKS + ch;
      const int h = ci & 1;
      ft_mbar_wait(h_full + 8 * h, (ci >> 1) & 1);
      const float* const hv = halo_ptr + h * (FT_HALO_BYTES / 4);
      unsigned a[2][4][4];
#pragma unroll
      for (int tap = 0; tap < FT_RS; ++tap) {
        const int r = tap / FT_S, s = tap % FT_S;
        const int toff = r * FT_DIL_H * FT_HC + s * FT_DIL_W;
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
          const float* const p0 = hv + (8 * ks + tq) * FT_CHS + toff;
          a[tap & 1][ks][0] = __float_as_uint(ft_tf32(p0[pix[0]]));
          a[tap & 1][ks][1] = __float_as_uint(ft_tf32(p0[pix[1]]));
          a[tap & 1][ks][2] = __float_as_uint(ft_tf32(p0[4 * FT_CHS + pix[0]]));
          a[tap & 1][ks][3] = __float_as_uint(ft_tf32(p0[4 * FT_CHS + pix[1]]));
        }
        const int stage = it % FT_STAGES;
        ft_mbar_wait(b_full + 8 * stage, (it / FT_STAGES) & 1);
        const unsigned b_s = smem0 + stage * FT_B_BYTES;
        ft_wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) ft_wgmma_rs<FT_BN>(acc, a[tap & 1][ks], ft_smem_desc(b_s + 32 * ks));
        ft_wgmma_commit();
        ft_wgmma_wait<1>();
        if (tap > 0 && lane == 0) ft_mbar_arrive(b_empty + 8 * ((it - 1) % FT_STAGES));
        ++it;
      }
      ft_wgmma_wait<0>();
      if (lane == 0) {
        ft_mbar_arrive(b_empty + 8 * ((it - 1) % FT_STAGES));
        ft_mbar_arrive(h_empty + 8 * h);
      }
    }

    // ---- epilogue for column tile nt ----
    long long opix[2];
    bool oval[2];
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int m = 64 * c + row0 + 8 * hf;
      const int p = tp0 + m / FT_TQ, q = tq0 + m % FT_TQ;
      oval[hf] = p < FT_P && q < FT_Q;
      opix[hf] = (long long)p * FT_Q + q;
    }
#if FT_REDUCE
#pragma unroll
    for (int i = 0; i < FT_BN / 8; ++i) {
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        const int k = nt * FT_BN + 8 * i + 2 * tq + hh;
        if (k < FT_K) {
          red0 = ft_reduce_step(red0, ft_epilogue_value(acc[4 * i + hh], k, chan));
          red1 = ft_reduce_step(red1, ft_epilogue_value(acc[4 * i + 2 + hh], k, chan));
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
          if (k < FT_K) {
            epi[(col - 32 * cb) * FT_EPI_PITCH + row0] = ft_epilogue_value(acc[4 * i + hh], k, chan);
            epi[(col - 32 * cb) * FT_EPI_PITCH + row0 + 8] = ft_epilogue_value(acc[4 * i + 2 + hh], k, chan);
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
          for (int chn = tid >> 6; chn < 32; chn += 2) {
            const int k = nt * FT_BN + 32 * cb + chn;
            if (k < FT_K) dst[(long long)k * FT_PQ] = epi[chn * FT_EPI_PITCH + px];
          }
        }
      }
      asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
    }
    (void)opix;
    (void)oval;
#endif
#if FT_REDUCE
    if (nt == FT_NT - 1) {
#pragma unroll
      for (int off = 1; off < 4; off *= 2) {
        red0 = ft_reduce_step(red0, __shfl_xor_sync(0xffffffffu, red0, off));
        red1 = ft_reduce_step(red1, __shfl_xor_sync(0xffffffffu, red1, off));
      }
      if (tq == 0) {
        if (oval[0]) out[n * FT_PQ + opix[0]] = ft_chain_post(ft_reduce_finish(red0), 0, chan);
        if (oval[1]) out[n * FT_PQ + opix[1]] = ft_chain_post(ft_reduce_finish(red1), 0, chan);
      }
    }
#endif
  }
}
