#include "export/python_literal.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace fusetune::exporter {

std::string py_str(const std::string& s) { return nlohmann::json(s).dump(); }

std::string py_float(double v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  std::string t = fmt::format("{}", v);  // shortest round-trip form, as the canonical spec prints
  if (t.find_first_of(".e") == std::string::npos) t += ".0";
  return t;
}

std::string py_tuple(const std::vector<int64_t>& values) {
  if (values.size() == 1) return fmt::format("({},)", values[0]);
  return fmt::format("({})", fmt::join(values, ", "));
}

std::string py_list(const std::vector<std::string>& items) { return fmt::format("[{}]", fmt::join(items, ", ")); }

std::string py_long_text(const std::string& text) {
  // A raw string cannot contain its own delimiter nor end in a backslash (it would escape the
  // closing quote); anything else, backslash line continuations included, stays verbatim.
  const bool raw_ok = text.find("\"\"\"") == std::string::npos && (text.empty() || text.back() != '\\') &&
                      (text.empty() || text.back() != '"') && text.find('\r') == std::string::npos;
  if (!raw_ok) return py_str(text);
  return "r\"\"\"" + text + "\"\"\"";
}

}  // namespace fusetune::exporter
