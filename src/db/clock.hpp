#pragma once
// Timestamps stored in created_at columns.
#include <string>

namespace fusetune::db {

// UTC, ISO 8601 with milliseconds: "2026-11-29T12:34:56.789Z". Fixed width, so text order
// is time order (merge keeps the newer record by comparing these).
[[nodiscard]] std::string utc_now_iso8601();

}  // namespace fusetune::db
