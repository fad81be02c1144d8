#pragma once
// TEST-ONLY planted variants, enabled by FUSETUNE_TEST_PLANT (tune) or GenerateOptions::plant:
// copies of real variants that are wrong on purpose, so GPU tests can prove that verification
// rejects each kind of bug, and that the tuner records a fault and a hang and goes on.
// Each define-based plant is made from the first variant of every epilogue design it applies to:
//   wrong   an off-by-one channel index for every per-channel value (FT_PLANT_CHANNEL_SHIFT)
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
// `which` is a comma-separated list of those words; `subtle` means bias,row,reduce,twice,tap.
// Their design is the base's with ".planted" appended: a sample of a design's variants never
// drops one (tune/tuner.cpp), and a planted bug that slipped through would win nothing real.
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

std::vector<Variant> planted_variants(const spec::Problem& problem, const std::vector<Variant>& real,
                                      const std::string& which);

}  // namespace fusetune::codegen
