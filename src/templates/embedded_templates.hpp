#pragma once
// Kernel templates from kernel_templates/, embedded at build time (cmake/embed_templates.cmake).
#include <map>
#include <string>
#include <string_view>

namespace fusetune::templates {

// File name (e.g. "epilogue_pointwise.cu") -> contents.
const std::map<std::string, std::string_view>& embedded_templates();

// kernel_templates/stages/: the kernels of the version-2 epilogue stages (issue 43), by file
// name without the folder ("stage_kernels.cu" for stages/stage_kernels.cu).
const std::map<std::string, std::string_view>& embedded_stage_templates();

// The named template ("stages/NAME" for one of the stage templates); throws std::out_of_range
// naming the file when it is missing.
std::string_view template_source(const std::string& file_name);

// 16 hex digits identifying the embedded templates: part of the environment fingerprint. The
// templates of kernel_templates/ only: the designs every stored record was generated from.
std::string templates_hash();

// The same for kernel_templates/stages/ (the records of version-2 candidates will carry it).
std::string stage_templates_hash();

}  // namespace fusetune::templates
