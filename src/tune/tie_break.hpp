#pragma once
// Noise-aware ties (docs/timing.md). Two pipelines whose medians differ by no more than the
// measured noise are not told apart by timing them: calling the faster median the winner would
// crown whichever the last round's noise favoured, and a re-tune could flip it. Such a pair is
// a tie, broken by a fixed secondary key that does not depend on the clock (fewer registers,
// then the name), and reported as a tie. GPU-free, so the rule is unit-tested.
#include <string>

#include "protocol/variant_result.hpp"

namespace fusetune::tune {

// Below this, 15 interleaved rounds do not resolve a difference on the H200 even when the
// spreads measured are smaller (drift between rounds is ~0.5%).
inline constexpr double kMinNoise = 0.01;

// The noise two timings are compared within: the larger of their interquartile spreads
// ((q3 - q1) / median), at least kMinNoise.
[[nodiscard]] double noise_between(const protocol::TimeFigures& a, const protocol::TimeFigures& b);

// Whether `other`'s median is within that noise of `ref`'s (relative to `ref`'s median). Both
// must be timed; an untimed one is never within noise.
[[nodiscard]] bool within_noise(const protocol::VariantResult& other, const protocol::VariantResult& ref);

// The secondary key: fewer registers first (a variant without a compiled kernel, registers
// unknown, after every known count), then the name. True when `a` comes before `b`.
[[nodiscard]] bool before_on_secondary_key(const protocol::VariantResult& a, const protocol::VariantResult& b);

struct TieDecision {
  bool tie = false;     // the two medians are within the noise
  bool swap = false;    // the slower median wins on the secondary key
  double gap = 0;       // (slower - faster) / faster median
  double noise = 0;     // noise_between the two
  std::string by;       // what broke the tie: "registers" | "name" ("" when not a tie)
};

// `faster` has the smaller (or equal) median, `slower` the next. The winner is `faster` unless
// the two tie and `slower` comes first on the secondary key (swap).
[[nodiscard]] TieDecision decide_tie(const protocol::VariantResult& faster, const protocol::VariantResult& slower);

}  // namespace fusetune::tune
