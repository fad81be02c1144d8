#include "spec/support.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "spec/main_parser.hpp"

namespace fusetune::spec {

std::optional<std::string> why_not_tunable(const Problem& p) {
  if (p.is_conv2d_chain()) return std::nullopt;
  // Version 2 (codegen::generate_model_variants): the vendor main operator alone (the floor),
  // `unfused` (the main operator, then one kernel per stage) and `epilogue.stages` (runs of
  // elementwise ops fused), channels-first only.
  if (p.is_conv() && (p.conv.in == Layout::nhwc || p.conv.out == Layout::nhwc))
    return fmt::format("the spec is valid, but tune and compile have no candidates for channels-last {} problems "
                       "yet: version-2 problems are planned channels-first (docs/spec-language.md, \"What tune "
                       "takes today\")",
                       detail::main_name(p.main));
  return std::nullopt;
}

void require_tunable(const Problem& problem) {
  if (auto why = why_not_tunable(problem)) throw InputError(*why);
}

}  // namespace fusetune::spec
