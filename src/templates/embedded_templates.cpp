#include "templates/embedded_templates.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "common/fnv1a.hpp"

namespace fusetune::templates {

std::string_view template_source(const std::string& file_name) {
  const auto& all = embedded_templates();
  const auto it = all.find(file_name);
  if (it == all.end()) throw std::out_of_range("no kernel template named '" + file_name + "' is embedded");
  return it->second;
}

std::string templates_hash() {
  // 64-bit FNV-1a over every template's name and text, in name order (std::map): a change to
  // any template changes the environment fingerprint, so stored results go stale with it.
  // A separator byte after each piece: ("ab","c") and ("a","bc") differ. The short basis is
  // what this hash has always started from (see fnv1a.hpp).
  constexpr unsigned char kSeparator = 0xff;
  Fnv1a64 h(Fnv1a64::kShortBasis);
  for (const auto& [name, text] : embedded_templates()) {
    h.add(name).add(kSeparator);
    h.add(text).add(kSeparator);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h.value()));
  return buf;
}

}  // namespace fusetune::templates
