#pragma once
// Variant <-> JSON, for the worker protocol and the tuning database. Lossless: a variant
// read back runs the same plan.
#include <nlohmann/json.hpp>

#include "codegen/variant.hpp"

namespace fusetune::codegen {

nlohmann::json to_json(const Variant& v);
Variant variant_from_json(const nlohmann::json& j);

nlohmann::json params_to_json(const Variant& v);    // [[name, value], ...]: keeps the order
nlohmann::json params_object(const Variant& v);     // {"name": value, ...}: for reports

}  // namespace fusetune::codegen
