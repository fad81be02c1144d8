#include "cli/format.hpp"

#include <fmt/format.h>

namespace fusetune::cli {

std::string params_text(const codegen::Variant& v) {
  std::string s;
  for (const auto& [name, value] : v.params) s += fmt::format("{}{}={}", s.empty() ? "" : " ", name, value);
  return s.empty() ? "-" : s;
}

std::string ms_cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : "-"; }
std::string speedup_cell(double v) { return v > 0 ? fmt::format("{:.2f}x", v) : "-"; }

}  // namespace fusetune::cli
