#pragma once
// Base64 (RFC 4648, standard alphabet, '=' padding) for blobs in dumps: a CUBIN has to
// survive a trip through JSON text. Small enough not to warrant a dependency.
#include <optional>
#include <string>
#include <string_view>

namespace fusetune::db {

[[nodiscard]] std::string base64_encode(std::string_view bytes);
// Strict: no whitespace, correct padding, canonical (unused bits zero); nullopt otherwise,
// so a damaged dump is refused rather than imported with wrong bytes.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

}  // namespace fusetune::db
