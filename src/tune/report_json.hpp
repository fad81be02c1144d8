#pragma once
// The stable JSON form of a tune run (schema "fusetune.tune/1", documented in docs/output.md).
#include <nlohmann/json.hpp>

#include "tune/tuner.hpp"

namespace fusetune::tune {
nlohmann::json report_to_json(const TuneReport& r);
nlohmann::json result_to_json(const TuneReport& rep, size_t i);
}  // namespace fusetune::tune
