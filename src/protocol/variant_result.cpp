#include "protocol/variant_result.hpp"

#include "codegen/candidates.hpp"

namespace fusetune::protocol {

std::string_view time_round_name(TimeRound r) {
  switch (r) {
    case TimeRound::first_pass: return "first pass";
    case TimeRound::finalists: return "finalists";
    case TimeRound::confirmation: return "confirmation";
  }
  return "?";
}

bool cudnn_owned_failure(const std::vector<VariantResult>& all, const VariantResult& r) {
  if (!codegen::engines_at_run_time(r.variant) || r.reason.empty()) return false;
  if (r.status == Status::not_supported) return true;
  if (r.status != Status::wrong_result) return false;
  for (const auto& o : all)
    if (&o != &r && o.variant.design == r.variant.design && o.status == Status::ok) return true;
  return false;
}

}  // namespace fusetune::protocol
