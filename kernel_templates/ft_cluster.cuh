// fusetune: thread-block clusters on sm_90 for fused_gemm.cu's FT_CLUSTER_M 2 (two blocks share each
// W block): the block's rank, a cluster-wide barrier, an mbarrier arrival on the other block, and
// the bulk copy that fills the same offset of several blocks at once. Standalone (no includes);
// pasted after ft_wgmma.cuh (its mbarriers) only into sources that use it. The same instructions
// ran in the fused conv's cluster experiment (perf-notes, call 84).
#ifndef FT_CLUSTER_CUH
#define FT_CLUSTER_CUH

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// This block's rank in its cluster.
__device__ __forceinline__ unsigned ft_cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster: what each did before (barrier initialisations
// above all) is visible to all after.
__device__ __forceinline__ void ft_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// One arrival on the barrier at shared-memory address `bar` of block `cta` of this cluster.
__device__ __forceinline__ void ft_mbar_arrive_remote(unsigned bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
// One bulk copy (as ft_bulk_g2s) into the same offset of every block of `mask`, each block's
// barrier at `bar` taking the bytes as transactions: one read of L2 fills them all.
__device__ __forceinline__ void ft_bulk_g2s_multicast(unsigned dst, const void* src, unsigned bytes, unsigned bar,
                                                      unsigned short mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}
#elif defined(FT_GENERATED)
#error "cluster kernels need --gpu-architecture=sm_90a"
#else
__device__ __forceinline__ unsigned ft_cluster_rank() {
  __trap();
  return 0;
}
__device__ __forceinline__ void ft_cluster_sync() { __trap(); }
__device__ __forceinline__ void ft_mbar_arrive_remote(unsigned, unsigned) { __trap(); }
__device__ __forceinline__ void ft_bulk_g2s_multicast(unsigned, const void*, unsigned, unsigned, unsigned short) { __trap(); }
#endif

#endif  // FT_CLUSTER_CUH
