#pragma once
// The whole plan in words: every step in order (kernels with their launch shapes, the cuDNN
// convolutions with everything needed to reproduce them), every buffer with its layout and
// size, and where the result ends up. Plain lines; each format adds its comment markers.
// conv_runner says who runs the cuDNN steps ("the caller, through the conv callback").
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "db/records.hpp"
#include "export/plan_buffers.hpp"
#include "spec/problem.hpp"

namespace fusetune::exporter {

[[nodiscard]] std::vector<std::string> plan_lines(const spec::Problem& problem, const db::WinnerRecord& winner,
                                                  const codegen::Variant& variant,
                                                  const std::vector<BufferInfo>& buffers,
                                                  const std::string& conv_runner);

}  // namespace fusetune::exporter
