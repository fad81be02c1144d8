#pragma once
// Range checks for the numeric flags, run while the command line is parsed, so a bad value is
// refused before anything runs (exit 2, one line naming the flag and the range):
//   fusetune: --budget: must be an integer from 1 to 1000000, got '0' (see fusetune --help)
// CLI11's own CLI::Range and CLI::PositiveNumber print their limits in full (a 300-digit number
// for a double's), and an unchecked int takes -1 or 0 where neither means anything.
// docs/commands.md ("Numeric flags") lists every range; the limits live here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace fusetune::cli {

inline constexpr int64_t kMaxJobs = 1024;          // parallel NVRTC compiles
inline constexpr int64_t kMaxBudget = 1000000;     // random-strategy variants
inline constexpr int64_t kMaxDevice = 1023;        // CUDA device ordinal
inline constexpr int64_t kMaxTopK = 1000;          // stored results re-verified
inline constexpr double kMaxTimeoutS = 86400;      // one variant's run: a day
inline constexpr int64_t kMaxSeed = 4294967295;    // --seed: 32 bits

// A decimal integer in [lo, hi] (an optional '-', then digits; nothing else).
[[nodiscard]] CLI::Validator integer_in(int64_t lo, int64_t hi);

// "I/N" with 0 <= I < N <= tune::kMaxShards (tune/shard.hpp).
[[nodiscard]] CLI::Validator shard_spec();

// `--devices`: "all", or GPU ordinals 0..kMaxDevice separated by commas, each at most once
// (two workers timing on one GPU would slow each other down).
struct DeviceList {
  bool all = false;
  std::vector<int> ordinals;  // in the order given; the first runs the rounds (tune/tuner.hpp)
};
[[nodiscard]] std::optional<DeviceList> parse_device_list(const std::string& value);
[[nodiscard]] CLI::Validator device_list();

// A finite decimal number of seconds in (0, max].
[[nodiscard]] CLI::Validator seconds_up_to(double max);

}  // namespace fusetune::cli
