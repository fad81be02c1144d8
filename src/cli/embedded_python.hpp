#pragma once
// The files of python/fusetune_torch/, embedded at build time by cmake/embed_templates.cmake
// (CMakeLists.txt), keyed by file name: `fusetune from-torch` needs no files beside the binary.
#include <map>
#include <string>
#include <string_view>

namespace fusetune::cli {

const std::map<std::string, std::string_view>& embedded_python();

}  // namespace fusetune::cli
