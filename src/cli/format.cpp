#include "cli/format.hpp"

#include <fmt/format.h>

namespace fusetune::cli {

std::string params_text(const codegen::Variant& v) {
  std::string s;
  for (const auto& [name, value] : v.params) s += fmt::format("{}{}={}", s.empty() ? "" : " ", name, value);
  return s.empty() ? "-" : s;
}

}  // namespace fusetune::cli
