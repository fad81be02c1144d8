#include "tune/shard.hpp"

#include <charconv>

#include <fmt/format.h>

#include "common/fnv1a.hpp"
#include "db/schema.hpp"

namespace fusetune::tune {

namespace {

// A non-empty run of decimal digits in [0, kMaxShards], the whole of `s`.
std::optional<int> small_number(std::string_view s) {
  if (s.empty() || s.size() > 6) return std::nullopt;
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < 0 || v > kMaxShards) return std::nullopt;
  return v;
}

}  // namespace

bool Shard::holds_name(std::string_view variant_name) const noexcept {
  // The same FNV-1a as problem keys and the compile cache: stable across builds and machines.
  return fnv1a64(variant_name) % uint64_t(count) == uint64_t(index);
}

std::string Shard::text() const { return fmt::format("{}/{}", index, count); }

std::optional<Shard> parse_shard(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto i = small_number(text.substr(0, slash));
  const auto n = small_number(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *i >= *n) return std::nullopt;
  return Shard{*i, *n};
}

}  // namespace fusetune::tune
