#pragma once
// "Did you mean ...?" for unknown op and key names. Internal to the parser.
#include <optional>
#include <string_view>
#include <vector>

namespace fusetune::spec::detail {

// The candidate closest to `word` by edit distance, if it is close enough to be a
// plausible typo (1 edit for words of up to 4 letters, else 2).
std::optional<std::string_view> nearest_name(std::string_view word,
                                             const std::vector<std::string_view>& candidates);

}  // namespace fusetune::spec::detail
