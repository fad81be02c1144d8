#include "common/math_mode.hpp"

namespace fusetune {

std::string_view math_mode_name(MathMode mode) {
  switch (mode) {
    case MathMode::tf32: return "tf32";
    case MathMode::fp32: return "fp32";
  }
  return "tf32";
}

std::optional<MathMode> parse_math_mode(std::string_view text) {
  if (text == "tf32") return MathMode::tf32;
  if (text == "fp32") return MathMode::fp32;
  return std::nullopt;
}

}  // namespace fusetune
