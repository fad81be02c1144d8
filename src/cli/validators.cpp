#include "cli/validators.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "common/terminal_text.hpp"
#include "tune/shard.hpp"

namespace fusetune::cli {

namespace {

// The value as typed, quoted, short and printable: it is the user's, but still goes to a terminal.
std::string shown_value(const std::string& value) { return "'" + text::excerpt(value, 24) + "'"; }

}  // namespace

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string range = fmt::format("{}..{}", lo, hi);
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        int64_t v = 0;
        const char* end = value.data() + value.size();
        const auto [ptr, ec] = std::from_chars(value.data(), end, v);
        if (value.empty() || ec != std::errc() || ptr != end || v < lo || v > hi)
          return fmt::format("must be an integer from {} to {}, got {}", lo, hi, shown_value(value));
        return {};
      },
      range, "integer_in");
}

CLI::Validator shard_spec() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (tune::parse_shard(value)) return {};
        return fmt::format("must be I/N with 0 <= I < N <= {} (shards count from 0), got {}", tune::kMaxShards,
                           shown_value(value));
      },
      "I/N", "shard_spec");
}

std::optional<DeviceList> parse_device_list(const std::string& value) {
  if (value == "all") return DeviceList{true, {}};
  DeviceList out;
  size_t at = 0;
  for (;;) {
    const size_t comma = value.find(',', at);
    const std::string_view item = std::string_view(value).substr(at, comma == std::string::npos ? value.npos : comma - at);
    int64_t v = -1;
    const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 0 || v > kMaxDevice)
      return std::nullopt;
    if (std::find(out.ordinals.begin(), out.ordinals.end(), int(v)) != out.ordinals.end()) return std::nullopt;
    out.ordinals.push_back(int(v));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

CLI::Validator device_list() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (parse_device_list(value)) return {};
        return fmt::format("must be 'all' or GPU ordinals from 0 to {} separated by commas, each once, got {}",
                           kMaxDevice, shown_value(value));
      },
      "LIST|all", "device_list");
}

CLI::Validator seconds_up_to(double max) {
  const std::string range = fmt::format("(0..{}]", max);
  return CLI::Validator(
      [max](std::string& value) -> std::string {
        double v = 0;
        const char* end = value.data() + value.size();
        // from_chars: decimal or scientific only (no hex, no leading '+'); "inf" and "nan" parse
        // and are refused by the finiteness check.
        const auto [ptr, ec] = std::from_chars(value.data(), end, v);
        if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(v) || v <= 0 || v > max)
          return fmt::format("must be a number of seconds > 0 and <= {}, got {}", max, shown_value(value));
        return {};
      },
      range, "seconds_up_to");
}

}  // namespace fusetune::cli
