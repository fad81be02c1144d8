#include "spec/support.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "spec/main_parser.hpp"

namespace fusetune::spec {

std::optional<std::string> why_not_tunable(const Problem& p) {
  if (p.is_conv2d_chain()) return std::nullopt;
  const std::string_view name = detail::main_name(p.main);
  std::string what;
  if (p.main != MainKind::conv2d) {
    what = fmt::format("{} problems", name);
  } else if (p.conv.groups != 1) {
    what = "grouped conv2d problems";
  } else {
    what = "conv2d problems whose epilogue is not a chain of elementwise ops with at most one channel reduction";
  }
  return fmt::format("the spec is valid, but tune and compile have no candidates for {} yet: today they take "
                     "conv2d with groups=1 and a chain epilogue (docs/spec-language.md, \"What tune takes today\")",
                     what);
}

void require_tunable(const Problem& problem) {
  if (auto why = why_not_tunable(problem)) throw InputError(*why);
}

}  // namespace fusetune::spec
