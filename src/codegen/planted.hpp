#pragma once
// TEST-ONLY planted variants, enabled by FUSETUNE_TEST_PLANT (tune) or GenerateOptions::plant:
// copies of real variants that are wrong on purpose, so GPU tests can prove that verification
// rejects each kind of bug, and that the tuner records a fault and a hang and goes on.
// Each define-based plant is made from the first variant of every epilogue design it applies to:
//   wrong   an off-by-one channel index for every per-channel value (FT_PLANT_CHANNEL_SHIFT; in
//           the fused convs with FT_PLANT_BIAS_SHIFT, which index the bias apart)
//   bias    the conv bias of channel k+1 added to channel k (FT_PLANT_BIAS_SHIFT)
//   row     output row P/2 of image 0 never stored (FT_PLANT_SKIP_ROW; not in the design whose
//           store is the fused transpose, epilogue_pointwise_nhwc.cu)
//   reduce  the channel reduction leaves out channel K-1 (FT_PLANT_SKIP_LAST_CHANNEL; problems
//           with a reduction)
//   twice   channel 0 gets the op chain applied twice (FT_PLANT_CHAIN_TWICE)
//   tap     the conv runs on filters with one tap of one input channel zeroed (a plan step
//           ft_planted_drop_tap in front; planted.cu)
//   fault   an epilogue plan whose kernel writes far outside any allocation
//   hang    an epilogue plan whose kernel never finishes
// The deep plants (issue 41), bugs inside the fused convs (kernel_templates/fused_conv_halo.cu,
// fused_conv.cu) and the reductions, each a `#define FT_PLANT_<macro> 1` on the variants it
// applies to (kDeepPlants below):
//   chunk     the last 32-channel chunk (gather design: the last 32-wide K tile) never loaded
//   edge      the input bounds check off by one row at the bottom edge: row H-1 reads as zero
//   filter    the last tap packed with the filter of tap 0 (R*S > 1)
//   stale     the last tap (gather: K tile) reads the previous filter stage (deterministic)
//   trunc     TF32 by truncation instead of rounding to nearest (TF32 designs)
//   split     3xTF32 without its small(A) * big(B) products (fused-conv.halo3x)
//   init      a min/max channel reduction started from 0 (fused convs and reducing epilogues)
//   lasttile  the last column tile left out of the reduction (variants with bn < K)
// They are made from the first variant of every fused-conv and epilogue design and, for the
// fused convs, from the first with an epilogue warpgroup and the first with bn < K.
// `which` is a comma-separated list of those words; `subtle` means bias,row,reduce,twice,tap,
// `deep` every deep plant. Their design is the base's with ".planted" appended: a sample of a
// design's variants never drops one (tune/tuner.cpp), and a planted bug that slipped through
// would win nothing real.
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

struct DeepPlant {
  const char* word;   // in FUSETUNE_TEST_PLANT and the variant name (".planted-<word>")
  const char* macro;  // FT_PLANT_<macro>
};
inline constexpr DeepPlant kDeepPlants[] = {
    {"chunk", "SKIP_CHUNK"},      {"edge", "HALO_EDGE"},          {"filter", "WRONG_FILTER"},
    {"stale", "STALE_STAGE"},     {"trunc", "TRUNCATE_TF32"},     {"split", "SPLIT_DROP"},
    {"init", "REDUCE_INIT"},      {"lasttile", "DROP_LAST_TILE"},
};

std::vector<Variant> planted_variants(const spec::Problem& problem, const std::vector<Variant>& real,
                                      const std::string& which);

}  // namespace fusetune::codegen
