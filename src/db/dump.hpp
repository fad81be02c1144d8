#pragma once
// The text form of a database: JSON lines that move records between machines
// (`fusetune db dump | import | merge`) and ship pretuned records (tuning_db/shipped).
//
//   {"fusetune_dump":1,"schema_version":1}
//   {"table":"environments","fingerprint":"gpu=...","hardware_fingerprint":...,"created_at":...}
//   {"table":"problems","key":"ca98e8d32aaaaf30","canonical":"conv2d(...) | ..."}
//   {"table":"results","env":"<fingerprint>","problem":"<key>","math":"tf32",...}
//   {"table":"winners","env":"<fingerprint>","problem":"<key>",...,"cubin":{"base64":"..."}}
//
// One object per row, parents first; rows refer to their environment and problem by
// fingerprint and key, never by the row ids of the database they came from, so a dump
// imports into any database. Fields follow schema.sql's column order and rows are sorted by
// their natural keys, so the same records always give the same bytes: importing a dump into
// an empty database and dumping that gives the dump back byte for byte.
//
// Values keep SQLite's storage class: null, integer, real, text as JSON; a blob as
// {"base64": "..."}; text that is not valid UTF-8 as {"text_base64": "..."}; an infinite
// real as {"real": "inf"} or {"real": "-inf"} (JSON has no infinity; SQLite has no NaN).
#include <cstddef>
#include <string>
#include <string_view>

#include "db/connection.hpp"

namespace fusetune::db {

inline constexpr int kDumpFormat = 1;

// Limits on one dump line, checked before the JSON parser sees it, so a hostile dump is
// refused with one short line instead of exhausting memory or the stack. A real line is at
// most a few MB (a winner with its base64 CUBIN and PTX) and nests 3 deep (a winner's
// {"cubin":{"base64":...}}); a variant's JSON travels as a string, so its depth does not count.
inline constexpr size_t kMaxDumpLineBytes = size_t{64} << 20;  // 64 MiB
inline constexpr int kMaxDumpDepth = 16;                        // arrays and objects, one inside the other

// A consistent snapshot: one read transaction unless the caller already holds one.
[[nodiscard]] std::string dump_database(const Connection& conn);

struct ImportOptions {
  bool mark_shipped = false;  // winners become shipped = 1 (seeding from tuning_db/shipped)
};

// Adds the dump's records inside the caller's transaction. A record already present is kept
// unless the dump's is newer (created_at); a measured winner is never replaced by a shipped
// one. Throws InputError naming the line for anything malformed (longer than kMaxDumpLineBytes
// or nested deeper than kMaxDumpDepth included: refused before parsing); a write the database
// refuses for reasons of its own (read-only, disk full, busy) is SqliteError naming the database.
void import_dump(const Connection& conn, std::string_view text, const ImportOptions& options = {});

}  // namespace fusetune::db
