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

// SQLite's quick_check (every page of every table and index read and checked, which the
// schema table alone does not reach): "" when it passes. Immutable first, so nothing is
// created beside the file; a fault seen that way is confirmed through an ordinary read-only
// connection, whose locks keep a writer in another process from showing as corruption.
std::string quick_check(const std::string& path) {
  const auto run = [](const Connection& c) {
    sqlite3_busy_timeout(c.get(), 10000);
    Statement s(c, "PRAGMA quick_check");
    std::string first;
    int faults = 0;
    while (s.step()) {
      const std::string row = s.column_text(0);
      if (row == "ok") continue;
      if (faults++ == 0) first = row;
    }
    // SQLite's report may span lines: one line, controls as spaces, at most 120 characters.
    first = first.substr(0, first.find('\n')).substr(0, 120);
    for (char& ch : first)
      if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    return faults == 0 ? std::string() : fmt::format("{} ({} fault(s))", first, faults);
  };
  try {
    if (run(Connection::open_immutable(path)).empty()) return "";
  } catch (const SqliteError& e) {
    (void)e;  // confirmed below
  }
  const auto had = [&](const char* suffix) { return std::filesystem::exists(path + suffix); };
  const bool had_wal = had("-wal"), had_shm = had("-shm");
  std::string fault;
  try {
    fault = run(Connection::open(path, SQLITE_OPEN_READONLY));
  } catch (const SqliteError& e) {
    fault = sqlite3_errstr(e.result());
  }
  // A refused file keeps nothing of ours beside it: an empty -wal and the -shm this check made.
  std::error_code ec;
  if (!fault.empty() && !had_wal && std::filesystem::file_size(path + "-wal", ec) == 0 && !ec) {
    std::filesystem::remove(path + "-wal", ec);
    if (!had_shm) std::filesystem::remove(path + "-shm", ec);
  }
  return fault;
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
  int64_t objects = 0;
  try {
    // Immutable: nothing is locked or created beside the file, whoever it belongs to.
    const Connection ro = Connection::open_immutable(path);
    // Reading the whole schema table walks its b-tree: a damaged page shows up here.
    Statement s(ro, "SELECT type, name FROM sqlite_master ORDER BY rowid");
    while (s.step()) {
      ++objects;
      if (s.column_text(0) == "table" && s.column_text(1).rfind("sqlite_", 0) != 0) tables.push_back(s.column_text(1));
    }
    version = static_cast<int>(ro.query_int64("PRAGMA user_version"));
    app_id = static_cast<int32_t>(ro.query_int64("PRAGMA application_id"));
  } catch (const SqliteError& e) {
    // SQLite's words for the fault ("file is not a database", "database disk image is
    // malformed"); the call that met it would only distract in a one-line message.
    throw bad(fmt::format("damaged or unreadable SQLite database ({})", sqlite3_errstr(e.result())));
  }

  if (app_id != kApplicationId) {
    // Only a file with nothing in it at all is ours to fill: a view, an index or a trigger is
    // somebody's.
    if (objects == 0 && version == 0 && app_id == 0) return {.fresh = true};
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
  if (std::string fault = quick_check(path); !fault.empty()) throw bad("damaged: " + fault);
  return {.fresh = false, .version = version};
}

}  // namespace fusetune::db
