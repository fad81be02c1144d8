#include "db/shipped_winners.hpp"

#include <set>
#include <string>
#include <string_view>

#include "common/lines.hpp"
#include "db/embedded_db_files.hpp"

namespace fusetune::db {

namespace {

using Json = nlohmann::ordered_json;

// What makes a winner the one fusetune shipped: where, for what, which code, how fast.
std::string winner_identity(const Json& w) {
  Json id = Json::array();
  for (const char* f : {"env", "problem", "math", "candidate", "variant_name", "variant_json", "time_median_ms"})
    id.push_back(w.contains(f) ? w[f] : Json());
  return id.dump();
}

}  // namespace

// The shipped files are parsed once, when a dump first claims a shipped winner.
bool is_shipped_winner(const Json& w) {
  static const std::set<std::string> kShipped = [] {
    std::set<std::string> ids;
    for (const auto& [name, text] : embedded_db_files()) {
      if (!name.ends_with(".jsonl")) continue;
      for_each_line(text, [&](size_t, std::string_view line) {
        if (line.find("\"table\":\"winners\"") == std::string_view::npos) return;
        const Json j = Json::parse(line, nullptr, false);
        if (!j.is_discarded()) ids.insert(winner_identity(j));
      });
    }
    return ids;
  }();
  return kShipped.contains(winner_identity(w));
}

}  // namespace fusetune::db
