#include "tune/search/strategy.hpp"

#include <fmt/format.h>

#include <string>

#include "common/error.hpp"

namespace fusetune::tune {

std::string_view strategy_name(Strategy s) {
  switch (s) {
    case Strategy::exhaustive: return "exhaustive";
    case Strategy::random: return "random";
    case Strategy::model: return "model";
  }
  return "?";
}

Strategy parse_strategy(std::string_view name) {
  for (Strategy s : {Strategy::exhaustive, Strategy::random, Strategy::model})
    if (strategy_name(s) == name) return s;
  throw Error(ExitCode::bad_input, fmt::format("unknown strategy '{}' (exhaustive | random | model)", name));
}

}  // namespace fusetune::tune
