#pragma once
// Between a tune run and the tuning database: the environment fingerprint of the device the
// worker reported, and the records of results and of the winner.
#include <nlohmann/json.hpp>

#include "db/records.hpp"
#include "tune/tuner.hpp"

namespace fusetune::tune {

// From the worker's {"name", "limits", "driver", ...} plus this binary's NVRTC, cuDNN and
// template versions.
db::Environment environment_from_device(const nlohmann::json& device);

db::ResultRecord result_record(const TuneReport& rep, size_t i);
db::WinnerRecord winner_record(const TuneReport& rep, const db::Environment& env);

// A stored winner as a precompiled variant the tuner can run again (smoke, re-verification).
protocol::VariantResult injected_from_winner(const db::WinnerRecord& w);

}  // namespace fusetune::tune
