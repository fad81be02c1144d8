#pragma once
// Kernel templates from kernel_templates/, embedded at build time (cmake/embed_templates.cmake).
#include <map>
#include <string>
#include <string_view>

namespace fusetune::templates {

// File name (e.g. "epilogue_pointwise.cu") -> contents.
const std::map<std::string, std::string_view>& embedded_templates();

// The named template; throws std::out_of_range naming the file when it is missing.
std::string_view template_source(const std::string& file_name);

// 16 hex digits identifying the embedded templates: part of the environment fingerprint.
std::string templates_hash();

}  // namespace fusetune::templates
