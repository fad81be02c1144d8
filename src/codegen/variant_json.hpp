#pragma once
// Variant <-> JSON, for the worker protocol and the tuning database. Lossless: a variant
// read back runs the same plan. Buffers appear by name in the JSON (readable), by index in
// the struct; a plan naming a buffer its table lacks does not read back.
#include <nlohmann/json.hpp>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

// Bump when the JSON shape changes: records of another format are refused, not misread.
inline constexpr int kVariantFormat = 2;

nlohmann::json to_json(const Variant& v);
// Throws InputError naming the field when `j` is not a variant (a wrong type, a missing
// field, an unknown candidate, layout or buffer name). Structure only: check_variant()
// (codegen/variant_check.hpp) decides whether the plan is sound for a problem.
Variant variant_from_json(const nlohmann::json& j);

nlohmann::json params_to_json(const Variant& v);    // [[name, value], ...]: keeps the order
nlohmann::json params_object(const Variant& v);     // {"name": value, ...}: for reports

}  // namespace fusetune::codegen
