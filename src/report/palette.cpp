#include "report/palette.hpp"

#include "codegen/variant.hpp"

namespace fusetune::report::palette {

std::string candidate_color(std::string_view candidate) {
  const auto c = codegen::candidate_from_name(candidate);
  if (!c) return "#9c6ade";
  // No default: a new candidate makes the compiler ask for its color.
  switch (*c) {
    case codegen::Candidate::unfused: return "#9aa5b1";
    case codegen::Candidate::cudnn: return "#a1887f";
    case codegen::Candidate::epilogue: return "#3f7fbf";
    case codegen::Candidate::fused_conv: return "#e8873a";
    case codegen::Candidate::cudnn_fused: return "#4c9f5a";
  }
  return "#9c6ade";
}

}  // namespace fusetune::report::palette
