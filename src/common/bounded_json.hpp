#pragma once
// JSON text stored inside a record (a variant, parameters, conv choices) may come from an
// imported dump: it is parsed with a depth limit, because what walks or prints the parsed value
// afterwards recurses. fusetune's own nest at most 4 levels.
#include <nlohmann/json.hpp>

#include <exception>
#include <string_view>

namespace fusetune {

struct JsonTooDeep : std::exception {
  [[nodiscard]] const char* what() const noexcept override { return "JSON nested deeper than 16 levels"; }
};

// Throws JsonTooDeep past 16 levels, nlohmann::json::exception for text that is not JSON.
[[nodiscard]] nlohmann::json parse_bounded(std::string_view text);

}  // namespace fusetune
