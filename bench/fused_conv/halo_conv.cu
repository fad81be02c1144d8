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

// ft_wgmma_rs (the RS-form wgmma) is in kernel_templates/ft_wgmma.cuh.

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
