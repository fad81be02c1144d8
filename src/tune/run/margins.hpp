#pragma once
// The rules the first passes and the rounds share.

namespace fusetune::tune {

// Finalists per design beyond TuneOptions::finalists: those within this of the best (rounds/finalists.cpp).
inline constexpr double kFinalistMargin = 0.10;
// A design whose first-pass best is this far behind the best of all sends one finalist: sustained
// load slowed the heaviest kernels by up to 10% against short bursts (call 38), so 25% cannot
// flip. A solution this far behind the best measured so far ends its first pass early.
inline constexpr double kOutOfReach = 0.25;
inline constexpr int kMaxFinalists = 6;

}  // namespace fusetune::tune
