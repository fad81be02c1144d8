#pragma once
// TEST-ONLY planted variants, enabled by FUSETUNE_TEST_PLANT (tune) or GenerateOptions::plant:
// copies of real variants that are wrong on purpose, so GPU tests can prove that the tuner
// rejects a wrong result, records a fault and a hang, and goes on.
//   wrong  the first NCHW and NHWC epilogue variants with an off-by-one channel index
//          (FT_PLANT_CHANNEL_SHIFT 1 in ft_common.cuh)
//   fault  an epilogue plan whose kernel writes far outside any allocation
//   hang   an epilogue plan whose kernel never finishes
// `which` is a comma-separated list of those words.
#include <string>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

std::vector<Variant> planted_variants(const std::vector<Variant>& real, const std::string& which);

}  // namespace fusetune::codegen
