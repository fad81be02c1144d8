#include "tune/variant_result.hpp"

namespace fusetune::tune {

std::string_view time_round_name(TimeRound r) {
  switch (r) {
    case TimeRound::first_pass: return "first pass";
    case TimeRound::finalists: return "finalists";
    case TimeRound::confirmation: return "confirmation";
  }
  return "?";
}

}  // namespace fusetune::tune
