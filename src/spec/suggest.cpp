#include "spec/suggest.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace fusetune::spec::detail {
namespace {

// Edit distance counting a swap of neighbours as one edit (optimal string alignment),
// since "rleu" for "relu" is the commonest typo. Only "is it <= 2" matters, so words
// whose lengths differ by more skip the O(n*m) table (fuzzed input can be long).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t longer = std::max(a.size(), b.size());
  const std::size_t shorter = std::min(a.size(), b.size());
  if (longer - shorter > 2) return longer - shorter;
  std::vector<std::size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, subst});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

}  // namespace

std::optional<std::string_view> nearest_name(std::string_view word,
                                             const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  // One typo in a short word, two in a longer one: "foo" is not a misspelt "log".
  std::size_t best_distance = word.size() <= 4 ? 2 : 3;
  for (std::string_view candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace fusetune::spec::detail
