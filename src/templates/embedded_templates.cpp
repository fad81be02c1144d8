#include "templates/embedded_templates.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "common/fnv1a.hpp"

namespace fusetune::templates {

std::string_view template_source(const std::string& file_name) {
  constexpr std::string_view kStages = "stages/";
  const bool stage = file_name.rfind(kStages, 0) == 0;
  const auto& all = stage ? embedded_stage_templates() : embedded_templates();
  const auto it = all.find(stage ? file_name.substr(kStages.size()) : file_name);
  if (it == all.end()) throw std::out_of_range("no kernel template named '" + file_name + "' is embedded");
  return it->second;
}

namespace {

// 64-bit FNV-1a over every template's name and text, in name order (std::map): a change to
// any template changes the environment fingerprint, so stored results go stale with it.
// A separator byte after each piece: ("ab","c") and ("a","bc") differ. The short basis is
// what this hash has always started from (see fnv1a.hpp).
std::string hash_of(const std::map<std::string, std::string_view>& templates) {
  constexpr unsigned char kSeparator = 0xff;
  Fnv1a64 h(Fnv1a64::kShortBasis);
  for (const auto& [name, text] : templates) {
    h.add(name).add(kSeparator);
    h.add(text).add(kSeparator);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h.value()));
  return buf;
}

}  // namespace

std::string templates_hash() { return hash_of(embedded_templates()); }

std::string stage_templates_hash() { return hash_of(embedded_stage_templates()); }

}  // namespace fusetune::templates
