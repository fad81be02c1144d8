#include "codegen/cudnn_engine.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fusetune::codegen {

std::string engine_label(const EngineKey& key) {
  std::string out = fmt::format("eng{}", key.engine);
  for (const auto& [type, value] : key.knobs) out += fmt::format(".k{}_{}", type, value);
  return out;
}

std::optional<EngineKey> engine_of(const Variant& v) {
  EngineKey key;
  bool found = false;
  for (const auto& [name, value] : v.params) {
    if (name == "eng") {
      key.engine = value;
      found = true;
    } else if (name.size() > 1 && name[0] == 'k' &&
               std::all_of(name.begin() + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      key.knobs.emplace_back(std::stoll(name.substr(1)), value);
    }
  }
  if (!found) return std::nullopt;
  std::sort(key.knobs.begin(), key.knobs.end());
  return key;
}

Variant with_engine(const Variant& t, const EngineKey& key) {
  Variant v = t;
  v.params.emplace_back("eng", key.engine);
  for (const auto& [type, value] : key.knobs) v.params.emplace_back(fmt::format("k{}", type), value);
  v.name = t.name + "." + engine_label(key);
  return v;
}

}  // namespace fusetune::codegen
