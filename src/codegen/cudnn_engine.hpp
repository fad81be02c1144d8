#pragma once
// A cuDNN engine configuration as a variant's parameters: `eng` = cuDNN's engine index and one
// `k<type>` = value per knob (type: cudnn_frontend::KnobType_t). A cudnn-fused variant without
// `eng` is a template: the tuner asks the worker for the configurations cuDNN offers on the GPU
// and makes one variant of each (tune/tuner.cpp).
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

struct EngineKey {
  int64_t engine = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;  // (knob type, value), sorted by type
  auto operator<=>(const EngineKey&) const = default;
};

// "eng7.k2_1.k24_29": names the configuration inside a variant name.
[[nodiscard]] std::string engine_label(const EngineKey& key);

// The configuration in v.params, or nullopt for a template (no `eng`).
[[nodiscard]] std::optional<EngineKey> engine_of(const Variant& v);

// A copy of template `t` pinned to `key`: params eng and k<type> appended, name
// "<t.name>.<engine_label>".
[[nodiscard]] Variant with_engine(const Variant& t, const EngineKey& key);

}  // namespace fusetune::codegen
