#pragma once
// 64-bit FNV-1a, the one hash behind problem keys, the kernel templates' hash, compile-cache
// file names and shard assignment. Its values are stored (database keys, file names, shard
// placement across machines), so they must never change: the constants are the published
// ones and tests/fnv1a_test.cpp pins the reference vectors.
#include <cstdint>
#include <string_view>

namespace fusetune {

// Incremental form, for hashes over several pieces (e.g. name and text of every template).
class Fnv1a64 {
 public:
  static constexpr uint64_t kOffsetBasis = 0xcbf29ce484222325ULL;  // 14695981039346656037
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  // The published basis with its last decimal digit lost (1469598103934665603). The kernel
  // templates' hash and the guided search's tie keys were written with it; their values are
  // stored or pinned, so they keep it.
  static constexpr uint64_t kShortBasis = 1469598103934665603ULL;

  constexpr Fnv1a64() noexcept = default;
  // Starts from another state: kShortBasis, or a basis mixed with a seed.
  constexpr explicit Fnv1a64(uint64_t basis) noexcept : state_(basis) {}

  constexpr Fnv1a64& add(unsigned char byte) noexcept {
    state_ = (state_ ^ byte) * kPrime;
    return *this;
  }
  constexpr Fnv1a64& add(std::string_view bytes) noexcept {
    for (const char c : bytes) add(static_cast<unsigned char>(c));
    return *this;
  }
  [[nodiscard]] constexpr uint64_t value() const noexcept { return state_; }

 private:
  uint64_t state_ = kOffsetBasis;
};

[[nodiscard]] constexpr uint64_t fnv1a64(std::string_view bytes) noexcept { return Fnv1a64().add(bytes).value(); }

}  // namespace fusetune
