#include "spec/presets.hpp"

#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "spec/parser.hpp"

namespace fusetune::spec {
namespace {

// KernelBench level 2, problems 31 and 32 (PRODUCT.md, "The problem class").
const std::vector<std::pair<std::string, std::string>>& presets() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"kernelbench-31", "conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)"},
      {"kernelbench-32", "conv2d(n=64,c=64,h=256,w=256,k=128,r=3) | mul(2.0) | reduce_min(channel)"},
  };
  return table;
}

}  // namespace

std::optional<std::string> preset_spec(std::string_view name) {
  for (const auto& [preset, text] : presets()) {
    if (preset == name) return text;
  }
  return std::nullopt;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& entry : presets()) out.push_back(entry.first);
    return out;
  }();
  return names;
}

Problem resolve_problem(const std::optional<std::string>& spec_text, const std::optional<std::string>& preset) {
  if (spec_text && preset) throw InputError("give a SPEC or --preset NAME, not both");
  if (!spec_text && !preset) throw InputError("give a SPEC or --preset NAME (neither was given)");
  if (spec_text) {
    // A preset's name where a spec goes: say which flag takes it, not what the parser expected.
    if (preset_spec(*spec_text))
      throw InputError(fmt::format("'{0}' is a preset name, not a spec: use --preset {0}", *spec_text));
    return parse(*spec_text);
  }
  const std::optional<std::string> text = preset_spec(*preset);
  if (!text) {
    throw InputError(fmt::format("unknown preset '{}' (known: {})", *preset, fmt::join(preset_names(), ", ")));
  }
  return parse(*text);
}

}  // namespace fusetune::spec
