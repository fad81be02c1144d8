#pragma once
// `tune --strategy`: which solution variants a tune measures (docs/commands.md: "Search strategies"). One
// Searcher per value (search/searcher.hpp); the CLI's words are strategy_name()'s.
#include <string_view>

namespace fusetune::tune {

enum class Strategy {
  exhaustive,  // every generated variant
  random,      // TuneOptions::budget variants, drawn with TuneOptions::seed
  model,       // the guided search (guided_search.hpp): a cost model refined by what it measures
};

[[nodiscard]] std::string_view strategy_name(Strategy s);
// The value named `name` ("model"); throws Error(bad_input) for another word.
[[nodiscard]] Strategy parse_strategy(std::string_view name);

}  // namespace fusetune::tune
