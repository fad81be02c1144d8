#include "db/file_check.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "db/connection.hpp"
#include "db/schema.hpp"
#include "db/sqlite_check.hpp"
#include "db/statement.hpp"

namespace fusetune::db {

namespace {

constexpr char kMagic[] = "SQLite format 3";  // the first 16 bytes of every SQLite file, NUL included

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 5) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

}  // namespace

FileCheck check_database_file(const std::string& path, const std::string& role) {
  namespace fs = std::filesystem;
  const auto bad = [&](const std::string& what) { return InputError(fmt::format("{} {}: {}", role, path, what)); };

  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return {.fresh = true};
  if (ec) throw bad(ec.message());
  if (st.type() == fs::file_type::directory) throw bad("is a directory, not a database file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw bad(ec.message());
  if (size == 0) return {.fresh = true};  // SQLite treats an empty file as an empty database

  char header[sizeof kMagic] = {};
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw bad(fmt::format("cannot read it ({})", std::strerror(errno)));
    f.read(header, sizeof header);
  }
  if (size < 512 || std::memcmp(header, kMagic, sizeof kMagic) != 0)
    throw bad("not an SQLite database (it does not start with the SQLite header)");

  int version = 0;
  int32_t app_id = 0;
  std::vector<std::string> tables;
  try {
    const Connection ro = Connection::open(path, SQLITE_OPEN_READONLY);
    sqlite3_busy_timeout(ro.get(), 10000);
    // Reading the whole schema table walks its b-tree: a damaged page shows up here.
    Statement s(ro, "SELECT type, name FROM sqlite_master ORDER BY rowid");
    while (s.step())
      if (s.column_text(0) == "table" && s.column_text(1).rfind("sqlite_", 0) != 0) tables.push_back(s.column_text(1));
    version = static_cast<int>(ro.query_int64("PRAGMA user_version"));
    app_id = static_cast<int32_t>(ro.query_int64("PRAGMA application_id"));
  } catch (const SqliteError& e) {
    // SQLite's words for the fault ("file is not a database", "database disk image is
    // malformed"); the call that met it would only distract in a one-line message.
    throw bad(fmt::format("damaged or unreadable SQLite database ({})", sqlite3_errstr(e.result())));
  }

  if (app_id != kApplicationId) {
    if (tables.empty() && version == 0 && app_id == 0) return {.fresh = true};
    throw bad(fmt::format("not a fusetune tuning database (an SQLite file with {}, user_version {}, application_id {})",
                          tables.empty() ? std::string("no tables") : "tables " + list(tables), version, app_id));
  }
  if (version > kSchemaVersion)
    throw bad(fmt::format("schema version {} is newer than this fusetune reads ({}): use a newer fusetune", version,
                          kSchemaVersion));
  if (version < 1) throw bad(fmt::format("damaged: fusetune's mark but schema version {}", version));
  if (version == kSchemaVersion) {
    // Older versions have older tables: migrations check those by running.
    std::vector<std::string> missing;
    for (const auto& t : current_tables())
      if (std::find(tables.begin(), tables.end(), t.name) == tables.end()) missing.push_back(t.name);
    if (!missing.empty()) throw bad("damaged: missing table(s) " + list(missing));
  }
  return {.fresh = false, .version = version};
}

}  // namespace fusetune::db
