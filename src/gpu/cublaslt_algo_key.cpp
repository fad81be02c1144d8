#include "gpu/cublaslt_algo_key.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <limits>

namespace fusetune::gpu {
namespace {

constexpr std::array<std::string_view, 9> kFields = {"id",      "tile",   "stages", "splitk", "reduction",
                                                     "swizzle", "custom", "inner",  "cluster"};

// One decimal field into `out`, refusing what does not fit its type.
template <typename T>
bool parse_field(std::string_view digits, T& out) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return false;
  if (v < int64_t(std::numeric_limits<T>::min()) || v > int64_t(std::numeric_limits<T>::max())) return false;
  out = static_cast<T>(v);
  return true;
}

}  // namespace

std::string CublasLtAlgoKey::text() const {
  return fmt::format("id={},tile={},stages={},splitk={},reduction={},swizzle={},custom={},inner={},cluster={}", id,
                     tile, stages, splitk, reduction, swizzle, custom, inner_shape, cluster);
}

std::optional<CublasLtAlgoKey> parse_cublaslt_algo_key(std::string_view text, std::string* why) {
  const auto fail = [&](const std::string& reason) -> std::optional<CublasLtAlgoKey> {
    if (why != nullptr) *why = fmt::format("not a cuBLASLt algorithm key '{}': {}", text, reason);
    return std::nullopt;
  };
  CublasLtAlgoKey key;
  std::string_view rest = text;
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    const std::size_t comma = rest.find(',');
    const bool last = i + 1 == kFields.size();
    if (last != (comma == std::string_view::npos)) {
      return fail(last ? "fields after 'cluster'" : fmt::format("missing fields from '{}' on", kFields[i + 1]));
    }
    const std::string_view item = rest.substr(0, comma);
    rest = last ? std::string_view{} : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || item.substr(0, eq) != kFields[i]) {
      return fail(fmt::format("field {} must be '{}=N'", i + 1, kFields[i]));
    }
    const std::string_view digits = item.substr(eq + 1);
    bool ok = false;
    switch (i) {
      case 0: ok = parse_field(digits, key.id); break;
      case 1: ok = parse_field(digits, key.tile); break;
      case 2: ok = parse_field(digits, key.stages); break;
      case 3: ok = parse_field(digits, key.splitk); break;
      case 4: ok = parse_field(digits, key.reduction); break;
      case 5: ok = parse_field(digits, key.swizzle); break;
      case 6: ok = parse_field(digits, key.custom); break;
      case 7: ok = parse_field(digits, key.inner_shape); break;
      case 8: ok = parse_field(digits, key.cluster); break;
      default: break;
    }
    if (!ok) return fail(fmt::format("'{}' is not a value of '{}'", digits, kFields[i]));
  }
  return key;
}

}  // namespace fusetune::gpu
