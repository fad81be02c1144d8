#include "codegen/embedded_templates.hpp"

#include <stdexcept>

namespace fusetune::codegen {

std::string_view template_source(const std::string& file_name) {
  const auto& all = embedded_templates();
  const auto it = all.find(file_name);
  if (it == all.end()) throw std::out_of_range("no kernel template named '" + file_name + "' is embedded");
  return it->second;
}

}  // namespace fusetune::codegen
