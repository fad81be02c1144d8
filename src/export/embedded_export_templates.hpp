#pragma once
// The files of export_templates/, embedded at build time by cmake/embed_templates.cmake
// (CMakeLists.txt), keyed by file name: the binary needs no files beside it to export.
#include <map>
#include <string>
#include <string_view>

namespace fusetune::exporter {

const std::map<std::string, std::string_view>& embedded_export_templates();

}  // namespace fusetune::exporter
