// fusetune: one conv output value folded into a channel reduction. Both reducing epilogues use it
// (epilogue_reduce.cu after an NCHW conv, epilogue_reduce_nhwc.cu after an NHWC one): they differ
// only in how their threads split pixels and channels, so what one value goes through (the conv
// bias, the chain before the reduction, the reduction step, and the planted bugs' hooks) is
// written once. Needs ft_common.cuh and the problem's rendered ft_chain_pre and ft_reduce_step,
// which come before this file.
__device__ __forceinline__ float ft_reduce_fold(float acc, float x, int channel, const float* __restrict__ cv) {
  if (ft_plant_skips_channel(channel)) return acc;
  const int k = FT_CHAN_K(channel);
#if FT_HAS_BIAS
  x += cv[FT_BIAS_K(k)];  // the conv bias: chan[0 .. K)
#endif
  return ft_reduce_step(acc, FT_PLANT_CHAIN(ft_chain_pre, x, k, cv));
}
