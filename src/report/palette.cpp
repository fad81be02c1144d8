#include "report/palette.hpp"

#include "codegen/candidates.hpp"

namespace fusetune::report::palette {

std::string candidate_color(std::string_view candidate) {
  const codegen::CandidateInfo* c = codegen::candidate_info(candidate);
  return std::string(c ? c->colour : "#9c6ade");
}

}  // namespace fusetune::report::palette
