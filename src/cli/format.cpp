#include "cli/format.hpp"

#include <fmt/format.h>

#include "cli/tune_table.hpp"

namespace fusetune::cli {

std::string params_text(const codegen::Variant& v) {
  std::string s;
  // Layouts by name (layout=nhwc), as tune's and query's tables show them.
  // append, not operator+: GCC 12 -O3 flags the concatenation (-Wrestrict false positive).
  for (const auto& [name, value] : v.params) {
    if (!s.empty()) s.append(" ");
    s.append(param_display(name, value));
  }
  return s.empty() ? "-" : s;
}

std::string ms_cell(double v) { return v > 0 ? fmt::format("{:.3f}", v) : "-"; }
std::string speedup_cell(double v) { return v > 0 ? fmt::format("{:.2f}x", v) : "-"; }

}  // namespace fusetune::cli
