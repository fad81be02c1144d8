#include "db/database.hpp"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "common/error.hpp"
#include "db/clock.hpp"
#include "db/create_file.hpp"
#include "db/dump.hpp"
#include "db/embedded_db_files.hpp"
#include "db/file_check.hpp"
#include "db/migrations.hpp"
#include "db/schema.hpp"
#include "db/sqlite_check.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"
#include "db/wal_copy.hpp"

namespace fusetune::db {

namespace {

namespace fs = std::filesystem;

// Long enough to outwait another tuner's batch commit (milliseconds) many times over, short
// enough that a wedged process is noticed.
constexpr int kBusyTimeoutMs = 10000;

// WAL: readers never block the writer and one writer never blocks readers; with it,
// synchronous=NORMAL cannot corrupt the file on a crash (a power loss may drop the last
// commits, a killed process loses nothing it committed). The mode is stored in the file, so
// this switches it once per file. The switch needs an exclusive lock and SQLite does not
// call the busy handler for it: two processes opening a new file at once would see
// SQLITE_BUSY, so this waits by itself. On a file system without shared memory SQLite keeps
// its rollback journal, which is slower but still safe.
void enable_wal(const Connection& conn) {
  if (conn.query_text("PRAGMA journal_mode") == "wal") return;
  for (int waited_ms = 0;; waited_ms += 5) {
    try {
      (void)conn.query_text("PRAGMA journal_mode = WAL");
      return;
    } catch (const SqliteError& e) {
      const int primary = e.result() & 0xff;
      if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || waited_ms >= kBusyTimeoutMs) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void configure(const Connection& conn) {
  FT_SQLITE_CALL(conn.get(), sqlite3_busy_timeout(conn.get(), kBusyTimeoutMs));
  conn.exec("PRAGMA foreign_keys = ON");
  enable_wal(conn);
  conn.exec("PRAGMA synchronous = NORMAL");
}

void load_shipped(const Connection& conn) {
  for (const auto& [name, text] : embedded_db_files()) {
    if (!name.ends_with(".jsonl")) continue;
    try {
      import_dump(conn, text, ImportOptions{.mark_shipped = true});
    } catch (const Error& e) {
      throw Error(ExitCode::failure, fmt::format("shipped records {}: {}", name, e.what()));  // a build defect
    }
  }
}

// Brings the file to the current schema. The check runs again under the write lock: another
// process may have created or migrated the file since this one looked.
void prepare_schema(const Connection& conn, const std::string& path, const OpenOptions& options) {
  const auto is_current = [&] {
    return conn.query_int64("PRAGMA application_id") == kApplicationId &&
           conn.query_int64("PRAGMA user_version") == kSchemaVersion;
  };
  if (is_current()) return;
  Transaction txn(conn);
  const auto app_id = conn.query_int64("PRAGMA application_id");
  const auto version = static_cast<int>(conn.query_int64("PRAGMA user_version"));
  const auto tables = conn.query_int64("SELECT COUNT(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite%'");
  if (app_id == 0 && version == 0 && tables == 0) {
    create_schema(conn);
    if (options.load_shipped) load_shipped(conn);
  } else if (app_id == kApplicationId && version >= 1 && version < kSchemaVersion) {
    try {
      migrate(conn, version);
    } catch (const Error& e) {
      throw Error(ExitCode::failure, fmt::format("tuning database {}: migrating schema version {} to {} failed ({}); "
                                                 "the file is unchanged",
                                                 path, version, kSchemaVersion, e.what()));
    }
  } else if (app_id != kApplicationId || version != kSchemaVersion) {
    throw InputError(fmt::format("tuning database {}: not a fusetune database of schema version {} "
                                 "(user_version {}, application_id {})",
                                 path, kSchemaVersion, version, app_id));
  }
  txn.commit();
}

int64_t upsert_environment(const Connection& conn, const Environment& env) {
  const std::string fingerprint = env.fingerprint();
  Statement ins(conn,
                "INSERT INTO environments (fingerprint, hardware_fingerprint, gpu_name, cc_major, cc_minor, sm_count, "
                "mem_bytes, driver, cuda_runtime, nvrtc, cudnn, templates_hash, created_at) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) ON CONFLICT (fingerprint) DO NOTHING");
  ins.bind(1, fingerprint);
  ins.bind(2, env.hardware_fingerprint());
  ins.bind(3, env.gpu_name);
  ins.bind(4, env.cc_major);
  ins.bind(5, env.cc_minor);
  ins.bind(6, env.sm_count);
  ins.bind(7, env.mem_bytes);
  ins.bind(8, env.driver);
  ins.bind(9, env.cuda_runtime);
  ins.bind(10, env.nvrtc);
  ins.bind(11, env.cudnn);
  ins.bind(12, env.templates_hash);
  ins.bind(13, utc_now_iso8601());
  ins.step();
  Statement sel(conn, "SELECT id FROM environments WHERE fingerprint = ?1");
  sel.bind(1, fingerprint);
  if (!sel.step()) throw Error(ExitCode::failure, "environment row vanished after its insert");
  return sel.column_int64(0);
}

int64_t upsert_problem(const Connection& conn, const std::string& key, const std::string& canonical) {
  Statement ins(conn, "INSERT INTO problems (key, canonical) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING");
  ins.bind(1, key);
  ins.bind(2, canonical);
  ins.step();
  Statement sel(conn, "SELECT id FROM problems WHERE key = ?1");
  sel.bind(1, key);
  if (!sel.step()) throw Error(ExitCode::failure, "problem row vanished after its insert");
  return sel.column_int64(0);
}

std::string or_now(const std::string& created_at) { return created_at.empty() ? utc_now_iso8601() : created_at; }

// A private in-memory copy of `src` (SQLite's backup API reads one consistent snapshot),
// brought to the current schema: reading or merging another file never writes it.
Connection snapshot_in_memory(const Connection& src, int version) {
  Connection mem = Connection::open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  {
    std::unique_ptr<sqlite3_backup, decltype(&sqlite3_backup_finish)> backup(
        sqlite3_backup_init(mem.get(), "main", src.get(), "main"), &sqlite3_backup_finish);
    if (!backup) detail::throw_sqlite_error(mem.get(), sqlite3_errcode(mem.get()), "sqlite3_backup_init", FUSETUNE_FILE, __LINE__);
    FT_SQLITE_CALL(mem.get(), sqlite3_backup_step(backup.get(), -1));
  }
  if (version < kSchemaVersion) {
    Transaction txn(mem);
    migrate(mem, version);
    txn.commit();
  }
  return mem;
}

// An existing database of ours, read-only: an ordinary read-only connection (it respects other
// processes' locks), or, when even that cannot open (a WAL file in a folder where its -shm
// cannot be made), an immutable one: nobody can be writing it then either.
Connection open_for_reading(const std::string& path, int version) {
  std::optional<Connection> conn;
  try {
    conn.emplace(Connection::open(path, SQLITE_OPEN_READONLY));
    FT_SQLITE_CALL(conn->get(), sqlite3_busy_timeout(conn->get(), kBusyTimeoutMs));
    (void)conn->query_int64("SELECT COUNT(*) FROM sqlite_master");  // a WAL file needs its -shm here
  } catch (const SqliteError&) {
    conn.reset();
    std::error_code ec;
    if (fs::file_size(path + "-wal", ec) > 0 && !ec) {
      // Committed pages in the -wal that SQLite cannot read here: an immutable read would
      // ignore them (issue 42). Read a private copy through its WAL instead.
      const WalCopy copy(path);
      return snapshot_in_memory(copy.open(), version);
    }
    conn.emplace(Connection::open_immutable(path));
  }
  if (version < kSchemaVersion) return snapshot_in_memory(*conn, version);
  conn->exec("PRAGMA foreign_keys = ON");
  return std::move(*conn);
}

}  // namespace

Database Database::open(const std::string& path, const OpenOptions& options) {
  if (path.empty()) throw InputError("tuning database path is empty");
  if (path != ":memory:") {
    const fs::path parent = fs::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) throw InputError(fmt::format("tuning database {}: cannot create {} ({})", path, parent.string(), ec.message()));
    const bool existed = fs::exists(fs::symlink_status(path, ec));
    FileCheck check = check_database_file(path);  // throws for anything that is not ours
    if (check.empty_file)
      throw InputError(fmt::format("tuning database {}: an empty file, not a database (fusetune makes a new database "
                                   "only where no file exists: remove it or name another path)",
                                   path));
    if (!existed) {
      try {
        (void)create_database_file(path, [&](const Connection& c) {
          configure(c);
          prepare_schema(c, path, options);
        });
      } catch (const SqliteError& e) {
        throw InputError(fmt::format("tuning database {}: cannot write it ({})", path, sqlite3_errstr(e.result())));
      }
      check = check_database_file(path);
    }
    // A file this call created is opened read-write like before (a read-only connection would
    // leave its -wal and -shm beside it when it closes).
    if (options.read_only && !check.fresh && existed) {
      try {
        return Database(open_for_reading(path, check.version), path);
      } catch (const SqliteError& e) {
        throw InputError(fmt::format("tuning database {}: cannot read it ({})", path, sqlite3_errstr(e.result())));
      }
    }
  }
  std::optional<Connection> conn;
  try {
    conn.emplace(Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  } catch (const SqliteError& e) {
    throw InputError(fmt::format("tuning database {}: cannot open it ({})", path, e.what()));
  }
  try {
    configure(*conn);
    prepare_schema(*conn, path, options);
  } catch (const SqliteError& e) {
    // The file is ours and intact (checked above): what failed is writing it (a read-only file
    // or folder, a full disk). Commands that only read open it read-only instead. The system's
    // words too: "disk I/O error" alone does not say the disk is full.
    const int sys = sqlite3_system_errno(conn->get());
    std::string why = sqlite3_errstr(e.result());
    if (sys != 0) why += fmt::format(": {}", std::strerror(sys));
    throw InputError(fmt::format("tuning database {}: cannot write it ({})", path, why));
  }
  return Database(std::move(*conn), path);
}

int64_t Database::environment_id(const Environment& env) {
  Transaction txn(conn_);
  const int64_t id = upsert_environment(conn_, env);
  txn.commit();
  return id;
}

void Database::write_results(const Environment& env, const std::vector<ResultRecord>& results) {
  if (results.empty()) return;  // no reason to take the write lock
  Transaction txn(conn_);
  const int64_t env_id = upsert_environment(conn_, env);
  std::map<std::string, int64_t> problem_ids;
  Statement upsert(conn_,
                   "INSERT INTO results (env_id, problem_id, math, candidate, variant_name, params_json, status, reason, "
                   "log_excerpt, registers, spills, time_min_ms, time_median_ms, time_max_ms, time_count, "
                   "kernel_median_ms, gbps, pct_copy, max_abs, max_rel, rel_l2, created_at, time_round, "
                   "worst_ratio, rel_l2_limit, gpu) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
                   "?21, ?22, ?23, ?24, ?25, ?26) "
                   "ON CONFLICT (env_id, problem_id, math, variant_name, params_json) DO UPDATE SET "
                   "candidate = excluded.candidate, status = excluded.status, reason = excluded.reason, "
                   "log_excerpt = excluded.log_excerpt, registers = excluded.registers, spills = excluded.spills, "
                   "time_min_ms = excluded.time_min_ms, time_median_ms = excluded.time_median_ms, "
                   "time_max_ms = excluded.time_max_ms, time_count = excluded.time_count, "
                   "kernel_median_ms = excluded.kernel_median_ms, gbps = excluded.gbps, pct_copy = excluded.pct_copy, "
                   "max_abs = excluded.max_abs, max_rel = excluded.max_rel, rel_l2 = excluded.rel_l2, "
                   "created_at = excluded.created_at, time_round = excluded.time_round, "
                   "worst_ratio = excluded.worst_ratio, rel_l2_limit = excluded.rel_l2_limit, gpu = excluded.gpu");
  for (const auto& r : results) {
    auto [it, fresh] = problem_ids.try_emplace(r.problem_key, 0);
    if (fresh) it->second = upsert_problem(conn_, r.problem_key, r.canonical);
    upsert.reset();
    upsert.bind(1, env_id);
    upsert.bind(2, it->second);
    upsert.bind(3, r.math);
    upsert.bind(4, r.candidate);
    upsert.bind(5, r.variant_name);
    upsert.bind(6, r.params_json);
    upsert.bind(7, r.status);
    upsert.bind(8, r.reason);
    upsert.bind(9, r.log_excerpt);
    upsert.bind(10, r.registers);
    upsert.bind(11, r.spills);
    upsert.bind(12, r.time_min_ms);
    upsert.bind(13, r.time_median_ms);
    upsert.bind(14, r.time_max_ms);
    upsert.bind(15, r.time_count);
    upsert.bind(16, r.kernel_median_ms);
    upsert.bind(17, r.gbps);
    upsert.bind(18, r.pct_copy);
    upsert.bind(19, r.max_abs);
    upsert.bind(20, r.max_rel);
    upsert.bind(21, r.rel_l2);
    upsert.bind(22, or_now(r.created_at));
    upsert.bind(23, r.time_round);
    upsert.bind(24, r.worst_ratio);
    upsert.bind(25, r.rel_l2_limit);
    upsert.bind(26, r.gpu);
    upsert.step();
  }
  txn.commit();
}

void Database::write_winner(const WinnerRecord& w) {
  Transaction txn(conn_);
  const int64_t env_id = upsert_environment(conn_, w.env);
  const int64_t problem_id = upsert_problem(conn_, w.problem_key, w.canonical);
  Statement upsert(conn_,
                   "INSERT INTO winners (env_id, problem_id, math, candidate, variant_name, variant_json, "
                   "compile_options, cubin, ptx, time_median_ms, time_spread, unfused_median_ms, cudnn_median_ms, "
                   "cudnn_algo, shipped, created_at, conv_choices) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) "
                   "ON CONFLICT (env_id, problem_id, math) DO UPDATE SET "
                   "candidate = excluded.candidate, variant_name = excluded.variant_name, "
                   "variant_json = excluded.variant_json, compile_options = excluded.compile_options, "
                   "cubin = excluded.cubin, ptx = excluded.ptx, time_median_ms = excluded.time_median_ms, "
                   "time_spread = excluded.time_spread, unfused_median_ms = excluded.unfused_median_ms, "
                   "cudnn_median_ms = excluded.cudnn_median_ms, cudnn_algo = excluded.cudnn_algo, "
                   "shipped = excluded.shipped, created_at = excluded.created_at, conv_choices = excluded.conv_choices "
                   "WHERE NOT (excluded.shipped = 1 AND winners.shipped = 0)");
  upsert.bind(1, env_id);
  upsert.bind(2, problem_id);
  upsert.bind(3, w.math);
  upsert.bind(4, w.candidate);
  upsert.bind(5, w.variant_name);
  upsert.bind(6, w.variant_json);
  upsert.bind(7, w.compile_options);
  upsert.bind_blob(8, w.cubin);
  upsert.bind(9, w.ptx);
  upsert.bind(10, w.time_median_ms);
  upsert.bind(11, w.time_spread);
  upsert.bind(12, w.unfused_median_ms);
  upsert.bind(13, w.cudnn_median_ms);
  upsert.bind(14, w.cudnn_algo);
  upsert.bind(15, w.shipped ? 1 : 0);
  upsert.bind(16, or_now(w.created_at));
  upsert.bind(17, w.conv_choices);
  upsert.step();
  txn.commit();
}

std::string Database::dump() const { return dump_database(conn_); }

void Database::import_dump(std::string_view text) {
  Transaction txn(conn_);
  db::import_dump(conn_, text);
  txn.commit();
}

void Database::merge_from(const std::string& other_path) { merge_from(std::vector<std::string>{other_path}); }

void Database::merge_from(const std::vector<std::string>& other_paths) {
  const std::string role = "database to merge";
  // Every file read and checked before anything is written: one bad shard of a sweep leaves
  // this database as it was.
  std::vector<std::string> texts;
  for (const std::string& other_path : other_paths) {
    if (!fs::exists(other_path)) throw InputError(fmt::format("{} {}: no such file", role, other_path));
    std::error_code ec;
    if (path_ != ":memory:" && fs::equivalent(other_path, path_, ec))
      throw InputError(fmt::format("{} {}: it is the database itself", role, other_path));
    const FileCheck check = check_database_file(other_path, role);
    if (check.fresh) continue;  // an empty file: nothing to add

    // A private in-memory copy, so the other file is only ever read, even when its schema is
    // older and needs migrating first.
    const Connection mem = snapshot_in_memory(open_for_reading(other_path, kSchemaVersion), check.version);
    if (const VerifyReport report = verify_database(mem); !report.ok) {
      throw InputError(fmt::format("{} {}: fails verification: {}{}", role, other_path, report.problems.front(),
                                   report.problems.size() > 1
                                       ? fmt::format(" (and {} more problems)", report.problems.size() - 1)
                                       : std::string()));
    }
    texts.push_back(dump_database(mem));
  }
  // One transaction for all of them. The conflict rules (dump_rules.cpp: table_rules) do not depend on
  // the order the files come in, so merging shards in any order gives the same database.
  Transaction txn(conn_);
  for (const auto& text : texts) db::import_dump(conn_, text);
  txn.commit();
}

VerifyReport Database::verify() const { return verify_database(conn_); }

}  // namespace fusetune::db
