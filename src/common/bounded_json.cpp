#include "common/bounded_json.hpp"

namespace fusetune {

nlohmann::json parse_bounded(std::string_view text) {
  constexpr int kMaxDepth = 16;
  return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth) throw JsonTooDeep{};
    return true;
  });
}

}  // namespace fusetune
