#include "templates/embedded_templates.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>

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
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // separator: ("ab","c") and ("a","bc") differ
    h *= 1099511628211ull;
  };
  for (const auto& [name, text] : embedded_templates()) {
    mix(name);
    mix(text);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace fusetune::templates
