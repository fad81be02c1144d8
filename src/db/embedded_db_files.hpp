#pragma once
// tuning_db/*.sql and tuning_db/shipped/*.jsonl, embedded at build time
// (cmake/embed_templates.cmake, called from CMakeLists.txt).
#include <map>
#include <string>
#include <string_view>

namespace fusetune::db {

// File name (e.g. "schema.sql", "h200.jsonl") -> contents.
const std::map<std::string, std::string_view>& embedded_db_files();

}  // namespace fusetune::db
