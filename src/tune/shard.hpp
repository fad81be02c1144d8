#pragma once
// `--shard I/N` (docs/cluster.md: "Sweeps"): a deterministic share of a sweep, so N processes on N hosts
// (a Slurm job array, a Kubernetes Indexed Job) split one sweep without talking to each other,
// and the N databases merge into what one process would have written (`db merge`).
//   problems of a --spec-file: the i-th problem of the file (0-based, problem lines only, after
//     duplicates are dropped) belongs to shard i mod N: neighbouring lines, often similar
//     layers, spread over the shards, and every shard gets within one problem of the others;
//   variants of one problem: a solution variant belongs to shard fnv1a64(name) mod N. By name,
//     not by position: the generated list depends on the device's limits, a name does not, so
//     every shard of one GPU model agrees on the split without exchanging the list. The
//     baselines and floors run in every shard: each shard's figures are relative to them.
// Indices are 0-based, as SLURM_ARRAY_TASK_ID (with --array=0-N-1) and JOB_COMPLETION_INDEX are.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fusetune::tune {

struct Shard {
  int index = 0;  // 0 .. count-1
  int count = 1;

  [[nodiscard]] bool whole() const noexcept { return count == 1; }
  [[nodiscard]] bool holds_position(size_t i) const noexcept { return i % size_t(count) == size_t(index); }
  [[nodiscard]] bool holds_name(std::string_view variant_name) const noexcept;
  [[nodiscard]] std::string text() const;  // "2/8"
};

// Largest N: far more than any sweep has hosts, and small enough to keep I/N a short word.
inline constexpr int kMaxShards = 100000;

// "I/N" with 0 <= I < N <= kMaxShards, decimal digits only; nullopt otherwise.
[[nodiscard]] std::optional<Shard> parse_shard(std::string_view text);

}  // namespace fusetune::tune
