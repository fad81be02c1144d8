#pragma once
// Python source literals for the values export_torch writes into its module.
#include <cstdint>
#include <string>
#include <vector>

namespace fusetune::exporter {

// A str literal that reads back as `s` exactly (JSON's escapes are valid Python escapes).
[[nodiscard]] std::string py_str(const std::string& s);

// The shortest text that reads back to the same double, always a float literal: 2.0, 0.5, 1e+20.
[[nodiscard]] std::string py_float(double v);

// (1, 2, 3); a one-element tuple is (1,).
[[nodiscard]] std::string py_tuple(const std::vector<int64_t>& values);

// [a, b, c] from items that are already literals.
[[nodiscard]] std::string py_list(const std::vector<std::string>& items);

// A long text (CUDA source, JSON) as a readable r"""...""" literal, one source line per line,
// when a raw string can hold it exactly; otherwise py_str.
[[nodiscard]] std::string py_long_text(const std::string& text);

}  // namespace fusetune::exporter
