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
#include "db/wal_copy.hpp"

namespace fusetune::db {

namespace {

constexpr char kMagic[] = "SQLite format 3";  // the first 16 bytes of every SQLite file, NUL included

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < 5; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > 5) s += fmt::format(", ... ({} in all)", names.size());
  return s;
}

// Whether `path`-wal holds anything: then the main file alone is not the database (commits not
// yet checkpointed, or a checkpoint a kill cut short leaves the main file short), and only a
// connection that reads the WAL, as SQLite does, sees it whole.
bool wal_has_content(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path + "-wal", ec);
  return !ec && size > 0;
}

// Runs `read` on a connection that sees the file as SQLite does (issue 42: an immutable read
// ignores the -wal, and called a database killed mid-checkpoint "malformed"):
//   - no -wal content: immutable first, so nothing is locked or created beside a file that may
//     not be ours; a fault seen that way is confirmed as below (a writer in another process
//     may have made a -wal since);
//   - else an ordinary read-only connection: it reads through the -wal (SQLite rebuilds its
//     index in -shm, creating that file when missing) and its locks keep a writer in another
//     process from showing as corruption. It writes nothing to the database or the -wal.
//   - a read-only connection that cannot open (a folder where the -shm cannot be made): a
//     private copy of the file and its -wal, read through the WAL (db/wal_copy.hpp).
// `read` may run more than once and must start from nothing each time. SqliteError when no
// connection reads the file.
template <class Read>
void read_as_sqlite_does(const std::string& path, Read&& read) {
  const bool wal = wal_has_content(path);
  if (!wal) {
    try {
      read(Connection::open_immutable(path));
      return;
    } catch (const SqliteError&) {
      // confirmed below
    }
  }
  try {
    const Connection ro = Connection::open(path, SQLITE_OPEN_READONLY);
    sqlite3_busy_timeout(ro.get(), 10000);
    read(ro);
    return;
  } catch (const SqliteError& e) {
    // What the file holds (a fault, another writer's lock) is the answer; only a connection
    // that could not set up its reading (no -shm: CANTOPEN, READONLY_CANTINIT) tries the copy.
    const int primary = e.result() & 0xff;
    if (!wal || (primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY && primary != SQLITE_IOERR)) throw;
  }
  const WalCopy copy(path);
  read(copy.open());
}

// SQLite's quick_check (every page of every table and index read and checked, which the
// schema table alone does not reach): "" when it passes.
std::string quick_check(const std::string& path) {
  std::string fault;
  const auto run = [&](const Connection& c) {
    fault.clear();
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
    if (faults != 0) {
      fault = fmt::format("{} ({} fault(s))", first, faults);
      // As an error, so that read_as_sqlite_does confirms an immutable read's fault.
      throw SqliteError(SQLITE_CORRUPT, fault);
    }
  };
  try {
    read_as_sqlite_does(path, run);
  } catch (const SqliteError& e) {
    if (fault.empty()) fault = sqlite3_errstr(e.result());
  }
  return fault;
}

// A file that is refused keeps nothing of ours beside it: the empty -wal and the -shm that a
// read-only connection makes are removed again (what was there before stays).
class NoTraceUnlessKept {
 public:
  explicit NoTraceUnlessKept(std::string path)
      : path_(std::move(path)), had_wal_(exists("-wal")), had_shm_(exists("-shm")) {}
  ~NoTraceUnlessKept() {
    if (kept_) return;
    std::error_code ec;
    if (!had_wal_ && std::filesystem::file_size(path_ + "-wal", ec) == 0 && !ec) std::filesystem::remove(path_ + "-wal", ec);
    // The -shm is only an index of the -wal, rebuilt by whoever opens the file next.
    if (!had_shm_) std::filesystem::remove(path_ + "-shm", ec);
  }
  NoTraceUnlessKept(const NoTraceUnlessKept&) = delete;
  NoTraceUnlessKept& operator=(const NoTraceUnlessKept&) = delete;
  void keep() { kept_ = true; }

 private:
  [[nodiscard]] bool exists(const char* suffix) const {
    std::error_code ec;
    return std::filesystem::exists(path_ + suffix, ec);
  }
  std::string path_;
  bool had_wal_, had_shm_, kept_ = false;
};

}  // namespace

FileCheck check_database_file(const std::string& path, const std::string& role) {
  namespace fs = std::filesystem;
  const auto bad = [&](const std::string& what) { return InputError(fmt::format("{} {}: {}", role, path, what)); };

  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return {.fresh = true};
  if (ec) throw bad(ec.message());
  if (st.type() == fs::file_type::directory) throw bad("is a directory, not a database file");
  // /dev/null, a FIFO, a socket: SQLite could only fail on it later with its own words.
  if (st.type() != fs::file_type::regular)
    throw bad(fmt::format("is {}, not a database file", st.type() == fs::file_type::character ? "a character device"
                                                        : st.type() == fs::file_type::fifo    ? "a FIFO (pipe)"
                                                        : st.type() == fs::file_type::block   ? "a block device"
                                                        : st.type() == fs::file_type::socket  ? "a socket"
                                                                                              : "not a regular file"));
  const auto size = fs::file_size(path, ec);
  if (ec) throw bad(ec.message());
  // SQLite treats an empty file as an empty database; a merge finds nothing in it, and opening
  // it as the tuning database is refused (db/create_file.hpp says why).
  if (size == 0) return {.fresh = true, .version = 0, .empty_file = true};

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
  NoTraceUnlessKept no_trace(path);
  try {
    read_as_sqlite_does(path, [&](const Connection& ro) {
      objects = 0;
      tables.clear();
      // Reading the whole schema table walks its b-tree: a damaged page shows up here.
      Statement s(ro, "SELECT type, name FROM sqlite_master ORDER BY rowid");
      while (s.step()) {
        ++objects;
        if (s.column_text(0) == "table" && s.column_text(1).rfind("sqlite_", 0) != 0) tables.push_back(s.column_text(1));
      }
      version = static_cast<int>(ro.query_int64("PRAGMA user_version"));
      app_id = static_cast<int32_t>(ro.query_int64("PRAGMA application_id"));
    });
  } catch (const SqliteError& e) {
    // SQLite's words for the fault ("file is not a database", "database disk image is
    // malformed"); the call that met it would only distract in a one-line message.
    throw bad(fmt::format("damaged or unreadable SQLite database ({})", sqlite3_errstr(e.result())));
  }

  if (app_id != kApplicationId) {
    // Only a file with nothing in it at all is ours to fill: a view, an index or a trigger is
    // somebody's.
    if (objects == 0 && version == 0 && app_id == 0) {
      no_trace.keep();
      return {.fresh = true};
    }
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
  no_trace.keep();
  return {.fresh = false, .version = version};
}

}  // namespace fusetune::db
