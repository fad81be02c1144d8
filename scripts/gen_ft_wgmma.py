#!/usr/bin/env python3
"""Writes kernel_templates/ft_wgmma.cuh: the Hopper building blocks of the fused-conv template.

The wgmma wrappers are the reason this is generated: a PTX wgmma names every accumulator
register (N/2 of them per thread for a 64 x N tile), so each N needs its own asm statement
with its operand lists spelled out, in the SS form (A and B from shared memory) and the RS
form (A from registers). The rest of the header is hand-written and kept here verbatim,
so the whole file comes from this script.

The output must stay byte-identical to the committed header: the kernel templates' hash keys
stored tuning records, and tests/wgmma_generator_test.cpp compares the two. To change the
header, change this script, run it, and commit both.

  python3 scripts/gen_ft_wgmma.py                 # the header on stdout
  python3 scripts/gen_ft_wgmma.py -o kernel_templates/ft_wgmma.cuh

Python 3 standard library only.
"""
import argparse
import sys

# The tile widths N of m64nNk8 with a wrapper (the fused-conv template's block_n values).
WIDTHS = (32, 64, 128, 256)
REGS_PER_LINE = 16      # accumulator names per line of the PTX operand list
OPERANDS_PER_LINE = 8   # "+f"(d[i]) bindings per line of the output constraints


def accumulator_list(count):
    """The PTX list "%0, %1, ..." of `count` accumulators, as C string literals, one per line."""
    rows = []
    for start in range(0, count, REGS_PER_LINE):
        names = ", ".join("%{}".format(i) for i in range(start, min(start + REGS_PER_LINE, count)))
        last = start + REGS_PER_LINE >= count
        rows.append('      "{}{}"\n'.format(names, "" if last else ", "))
    return "".join(rows)


def output_constraints(count):
    """The asm output operands "+f"(d[0]), ... with the first line after the ':'."""
    rows = []
    for start in range(0, count, OPERANDS_PER_LINE):
        binds = ", ".join('"+f"(d[{}])'.format(i) for i in range(start, min(start + OPERANDS_PER_LINE, count)))
        last = start + OPERANDS_PER_LINE >= count
        rows.append("{}{}{}\n".format("      : " if start == 0 else "        ", binds, "" if last else ","))
    return "".join(rows)


def wgmma_ss(n):
    """ft_wgmma<N>: A and B from shared memory through descriptors."""
    acc = n // 2  # fp32 accumulators per thread: 64 x N over 128 threads
    return (
        "template <> __device__ __forceinline__ void ft_wgmma<{n}>(float* d, unsigned long long da, "
        "unsigned long long db) {{\n"
        "  asm volatile(\n"
        '      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale_d}, 0;\\n"\n'
        '      "wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{"\n'
        "{accs}"
        '      "}}, %{da}, %{db}, p, 1, 1;\\n}}\\n"\n'
        "{outs}"
        '      : "l"(da), "l"(db), "n"(1));\n'
        "}}\n"
    ).format(n=n, scale_d=acc + 2, accs=accumulator_list(acc), da=acc, db=acc + 1, outs=output_constraints(acc))


def wgmma_rs(n):
    """ft_wgmma_rs<N>: A from four registers per thread, B from shared memory."""
    acc = n // 2
    return (
        "template <> __device__ __forceinline__ void ft_wgmma_rs<{n}>(float* d, const unsigned* a, "
        "unsigned long long db) {{\n"
        "  asm volatile(\n"
        '      "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{scale_d}, 0;\\n"\n'
        '      "wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 {{"\n'
        "{accs}"
        '      "}}, {{%{a0}, %{a1}, %{a2}, %{a3}}}, %{db}, p, 1, 1;\\n}}\\n"\n'
        "{outs}"
        '      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "n"(1));\n'
        "}}\n"
    ).format(n=n, scale_d=acc + 5, accs=accumulator_list(acc), a0=acc, a1=acc + 1, a2=acc + 2, a3=acc + 3,
             db=acc + 4, outs=output_constraints(acc))


# ---- the hand-written parts, verbatim ------------------------------------------------------

HEAD = r"""// fusetune: Hopper (sm_90a) building blocks for the fused-conv template, as inline PTX: TF32
// warpgroup MMAs (wgmma) on shared-memory operands, their descriptors, mbarriers, cp.async.
// Standalone (no includes) like ft_common.cuh; everything here needs --gpu-architecture=sm_90a.
#ifndef FT_WGMMA_CUH
#define FT_WGMMA_CUH

// ---- shared-memory matrix descriptors -------------------------------------------------------
// Operands are K-major tiles of 32 TF32 values (128 bytes) per row in the 128-byte swizzle:
// 16-byte chunk c of row r lives at chunk c ^ (r % 8), tiles start 1024-byte aligned, and a
// group of 8 rows spans 1024 bytes (the stride byte offset). The leading byte offset is unused
// when a row holds the whole K extent of the swizzle atom (CUTLASS sets it to 1 as well).
// Advancing the start address by 32 bytes selects the next 8-wide K slice of the tile.
__device__ __forceinline__ unsigned long long ft_smem_desc(unsigned saddr) {
  return (unsigned long long)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
         (1ull << 62);
}
// Byte offset of TF32 element (row, k) in such a tile, 0 <= k < 32.
__device__ __forceinline__ unsigned ft_sw128(unsigned row, unsigned k) {
  return row * 128u + ((((k >> 2) ^ row) & 7u) << 4) + ((k & 3u) << 2);
}

// ---- warpgroup MMA ---------------------------------------------------------------------------
// wgmma exists only in the arch-specific target sm_90a (__CUDA_ARCH_FEAT_SM90_ALL). A generated
// source compiled for anything else is an error; the template's standalone sample (no
// FT_GENERATED), which the GPU-free tests also compile for plain sm_90 and sm_80, gets stubs
// that trap, so the rest of the template is still checked there.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || !defined(__CUDA_ARCH__)
__device__ __forceinline__ void ft_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void ft_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void ft_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D[64 x N] += A[64 x 8] * B[N x 8]^T, TF32 in, fp32 accumulate. Thread (warp w, lane l) of the
// warpgroup holds D rows 16w + l/4 (+8), columns 8i + 2(l%4) (+1) in d[4i .. 4i+3]:
// d[4i] (row, col), d[4i+1] (row, col+1), d[4i+2] (row+8, col), d[4i+3] (row+8, col+1).
// The accumulators must be spelled out one by one, hence one wrapper per N (generated once by
// a script, not by fusetune).
template <int N> __device__ __forceinline__ void ft_wgmma(float* d, unsigned long long da, unsigned long long db);
"""

BETWEEN = r"""
// The RS form: A (64 x 8) from registers, B from shared memory as above. Thread (warp w,
// lane l) passes a[0] = A(16w + l/4, l%4), a[1] = A(16w + l/4 + 8, l%4), a[2] and a[3] the same
// rows at column l%4 + 4 (the m16n8k8 TF32 fragment, per warp a 16-row slice), already TF32.
// D as for ft_wgmma.
template <int N> __device__ __forceinline__ void ft_wgmma_rs(float* d, const unsigned* a, unsigned long long db);
"""

TAIL = r"""
// Register budgets of warp-specialized kernels: producers give registers back, consumers take
// them (the block must have been launched with enough registers in total).
template <int N> __device__ __forceinline__ void ft_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void ft_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

#elif defined(FT_GENERATED)
#error "fused-conv kernels need --gpu-architecture=sm_90a (wgmma)"
#else
__device__ __forceinline__ void ft_wgmma_fence() { __trap(); }
__device__ __forceinline__ void ft_wgmma_commit() { __trap(); }
template <int N> __device__ __forceinline__ void ft_wgmma_wait() { __trap(); }
template <int N> __device__ __forceinline__ void ft_wgmma(float*, unsigned long long, unsigned long long) { __trap(); }
template <int N> __device__ __forceinline__ void ft_wgmma_rs(float*, const unsigned*, unsigned long long) { __trap(); }
template <int N> __device__ __forceinline__ void ft_setmaxnreg_inc() { __trap(); }
template <int N> __device__ __forceinline__ void ft_setmaxnreg_dec() { __trap(); }
#endif

// mbarrier waits and the async-proxy fence are sm_90 instructions: below that (the template's
// standalone sample on sm_80) they trap, as above.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// ---- mbarriers ----------------------------------------------------------------------------------
__device__ __forceinline__ void ft_mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void ft_mbar_arrive(unsigned bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
// Blocks until the phase of the given parity has completed. A fresh barrier counts its
// (nonexistent) previous phase, parity 1, as complete.
__device__ __forceinline__ void ft_mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// ---- copies ---------------------------------------------------------------------------------------
// 4 bytes, zero-filled when !valid (padding and rows past the last pixel); src must be a
// mapped address either way.
__device__ __forceinline__ void ft_cp_async4(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
}
__device__ __forceinline__ void ft_cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
// BYTES (4, 8 or 16) bytes, zero-filled when !valid; src must be a mapped address either way.
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
// One bulk copy (the copy engine, no threads) of `bytes` (a multiple of 16, both addresses
// 16-byte aligned) that completes as a transaction on `bar`, which must expect it first.
__device__ __forceinline__ void ft_mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void ft_bulk_g2s(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// Makes the barrier initialisations visible to the async proxy (bulk copies signal them).
__device__ __forceinline__ void ft_fence_mbar_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
__device__ __forceinline__ void ft_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void ft_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's generic-proxy shared-memory writes visible to the async proxy, which
// is how wgmma reads its operands.
__device__ __forceinline__ void ft_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

#elif defined(FT_GENERATED)
#error "fused-conv kernels need --gpu-architecture=sm_90a"
#else
__device__ __forceinline__ void ft_mbar_init(unsigned, unsigned) { __trap(); }
__device__ __forceinline__ void ft_mbar_arrive(unsigned) { __trap(); }
__device__ __forceinline__ void ft_mbar_wait(unsigned, unsigned) { __trap(); }
__device__ __forceinline__ void ft_cp_async4(unsigned, const void*, bool) { __trap(); }
__device__ __forceinline__ void ft_cp_async16(unsigned, const void*) { __trap(); }
__device__ __forceinline__ void ft_cp_async_commit() { __trap(); }
template <int BYTES> __device__ __forceinline__ void ft_cp_async_zfill(unsigned, const void*, bool) { __trap(); }
__device__ __forceinline__ void ft_mbar_expect_tx(unsigned, unsigned) { __trap(); }
__device__ __forceinline__ void ft_bulk_g2s(unsigned, const void*, unsigned, unsigned) { __trap(); }
__device__ __forceinline__ void ft_fence_mbar_init() { __trap(); }
template <int N> __device__ __forceinline__ void ft_cp_async_wait() { __trap(); }
__device__ __forceinline__ void ft_fence_proxy_async() { __trap(); }
#endif

// fp32 -> TF32, round to nearest (ties away), as cuDNN and cuBLAS round; wgmma itself would
// truncate the low 13 bits, which doubles the worst error the TF32 rule allows.
__device__ __forceinline__ float ft_tf32(float v) {
#if defined(FT_PLANT_TRUNCATE_TF32)
  return __uint_as_float(__float_as_uint(v) & 0xffffe000u);  // test-only planted bug: truncation (cvt.rz)
#else
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(v));
  return __uint_as_float(u);
#endif
}

#endif  // FT_WGMMA_CUH
"""


def header():
    return (HEAD + "".join(wgmma_ss(n) for n in WIDTHS) + BETWEEN + "".join(wgmma_rs(n) for n in WIDTHS) + TAIL)


def main():
    parser = argparse.ArgumentParser(description="Write kernel_templates/ft_wgmma.cuh.")
    parser.add_argument("-o", "--output", help="file to write (default: stdout)")
    args = parser.parse_args()
    text = header()
    data = text.encode("ascii")  # bytes, so neither the locale nor the platform changes them
    if args.output:
        with open(args.output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
