#pragma once
// Fills a text template's @NAME@ placeholders (export_templates/*.in).
#include <map>
#include <string>
#include <string_view>

namespace fusetune::exporter {

// Replaces every @NAME@ (NAME: capital letters, digits, '_') with values.at(NAME). Throws
// Error (exit 1) for a placeholder without a value or a value no placeholder uses: a template
// and its filler that drift apart fail in the tests, not in the user's module.
[[nodiscard]] std::string fill_template(std::string_view text, const std::map<std::string, std::string>& values);

// An embedded template from export_templates/ by file name; Error when it is missing.
[[nodiscard]] std::string_view export_template(const std::string& file_name);

// `text` without its final newline: what a placeholder on a line of its own takes (the template
// line keeps its own newline).
[[nodiscard]] std::string without_last_newline(std::string text);

// An embedded template inlined into another (the runtimes): export_template, without its last newline.
[[nodiscard]] std::string template_block(const std::string& file_name);

}  // namespace fusetune::exporter
