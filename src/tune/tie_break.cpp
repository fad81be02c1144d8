#include "tune/tie_break.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fusetune::tune {

namespace {

// Registers as the secondary key orders them: unknown (-1, no generated kernel) last.
int register_rank(const protocol::VariantResult& r) {
  return r.compile.registers >= 0 ? r.compile.registers : std::numeric_limits<int>::max();
}

}  // namespace

double noise_between(const protocol::TimeFigures& a, const protocol::TimeFigures& b) {
  const auto finite = [](double s) { return std::isfinite(s) ? s : 0.0; };
  return std::max({finite(a.spread), finite(b.spread), kMinNoise});
}

bool within_noise(const protocol::VariantResult& other, const protocol::VariantResult& ref) {
  if (!other.timed || !ref.timed || !(ref.time.median_ms > 0)) return false;
  return std::abs(other.time.median_ms - ref.time.median_ms) <= noise_between(other.time, ref.time) * ref.time.median_ms;
}

bool before_on_secondary_key(const protocol::VariantResult& a, const protocol::VariantResult& b) {
  const int ra = register_rank(a), rb = register_rank(b);
  if (ra != rb) return ra < rb;
  return a.variant.name < b.variant.name;
}

TieDecision decide_tie(const protocol::VariantResult& faster, const protocol::VariantResult& slower) {
  TieDecision d;
  d.noise = noise_between(faster.time, slower.time);
  if (faster.time.median_ms > 0) d.gap = (slower.time.median_ms - faster.time.median_ms) / faster.time.median_ms;
  d.tie = within_noise(slower, faster);
  if (!d.tie) return d;
  d.swap = before_on_secondary_key(slower, faster);
  d.by = register_rank(faster) != register_rank(slower) ? "registers" : "name";
  return d;
}

}  // namespace fusetune::tune
