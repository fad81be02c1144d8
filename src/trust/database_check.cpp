#include "trust/database_check.hpp"

#include <fmt/format.h>

#include "common/terminal_text.hpp"

#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::trust {

std::string check_records(const db::Database& db, bool check_code) {
  const auto results = db.results(std::nullopt, "", std::nullopt);
  for (size_t i = 0; i < results.size(); ++i) {
    if (std::string why = check_result(results[i]); !why.empty())
      return fmt::format("result {} of {} ({} {}): {}", i + 1, results.size(), text::excerpt(results[i].variant_name, 60),
                         text::excerpt(results[i].math, 8), why);
  }
  const auto winners = db.winners(std::nullopt, "", std::nullopt);
  for (size_t i = 0; i < winners.size(); ++i) {
    const auto& w = winners[i];
    std::string why = check_winner(w);
    if (why.empty() && check_code) {
      const Provenance prov = check_provenance(w);
      if (!prov.traced()) why = prov.why + " (--trust keeps it anyway)";
    }
    if (!why.empty())
      return fmt::format("winner {} of {} ({} {} {}): {}", i + 1, winners.size(), text::excerpt(w.problem_key, 20),
                         text::excerpt(w.math, 8), text::excerpt(w.variant_name, 60), why);
  }
  return "";
}

}  // namespace fusetune::trust
