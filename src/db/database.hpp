#pragma once
// The tuning database (PRODUCT.md, "Tuning database"): one SQLite file, WAL mode, shared
// safely by several tuner processes (one per GPU). Every write is one transaction, so a
// process killed mid-tune leaves every batch it committed and nothing half-written.
//
//   auto db = Database::open(default_db_path());
//   db.write_results(env, batch);              // after each batch of variants
//   db.write_winner(winner);                   // at the end of a run
//   if (auto w = db.winner(key, "tf32", env.fingerprint())) ...
//
// A file that is not a fusetune database, is damaged, or was written by a newer fusetune is
// refused with InputError (exit 2) before anything writes to it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/connection.hpp"
#include "db/records.hpp"
#include "db/verify.hpp"

namespace fusetune::db {

// $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db, else ~/.cache/fusetune/tuning.db.
[[nodiscard]] std::string default_db_path();

struct OpenOptions {
  // A new database gets the records in tuning_db/shipped (embedded), marked shipped = 1, so
  // query and export work out of the box. Tests turn it off to start from nothing.
  bool load_shipped = true;
  // For commands that only read (query, export, db dump, db verify): an existing file is opened
  // read-only, so a database in a folder nobody may write still opens, and an older schema is
  // migrated in a private in-memory copy instead of in the file. A missing file is created as
  // usual (with the shipped records).
  bool read_only = false;
};

class Database {
 public:
  // Creates the parent directories and the file when missing; migrates an older schema.
  static Database open(const std::string& path, const OpenOptions& options = {});

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  // The environment's row id, inserting it when new.
  int64_t environment_id(const Environment& env);

  // One transaction per call. A result's identity is (environment, problem, math, variant
  // name, params_json): writing one again updates its figures; a new parameter value is a new
  // row. An empty created_at is filled with the current time.
  void write_results(const Environment& env, const std::vector<ResultRecord>& results);

  // Replaces the stored winner for (environment, problem, math), except that a shipped
  // record never replaces a measured one.
  void write_winner(const WinnerRecord& winner);

  [[nodiscard]] std::optional<WinnerRecord> winner(const std::string& problem_key, const std::string& math,
                                                   const std::string& env_fingerprint) const;
  // The environment a record's env_fingerprint names, or nullopt when none is stored.
  [[nodiscard]] std::optional<Environment> environment(const std::string& fingerprint) const;
  // Filters are optional; gpu_substring matches the GPU name case-insensitively ("" = any).
  // Newest first.
  [[nodiscard]] std::vector<WinnerRecord> winners(const std::optional<std::string>& problem_key,
                                                  const std::string& gpu_substring,
                                                  const std::optional<std::string>& math) const;
  // Newest environment first; within it by problem, math, ok before failed, fastest first.
  // Each record's env_fingerprint says which environment it was measured in.
  [[nodiscard]] std::vector<ResultRecord> results(const std::optional<std::string>& problem_key,
                                                  const std::string& gpu_substring,
                                                  const std::optional<std::string>& math) const;
  // The k fastest ok results (by median) of one environment: the most recently created one
  // with this hardware fingerprint that has such results for the problem and math. Baselines
  // (unfused, cudnn) are left out. The environment may be the caller's own current one.
  [[nodiscard]] std::vector<ResultRecord> top_results(const std::string& problem_key, const std::string& math,
                                                      const std::string& hardware_fingerprint, int k) const;

  // JSON lines (db/dump.hpp); import(dump(a)) into an empty b gives dump(b) == dump(a).
  [[nodiscard]] std::string dump() const;
  // One transaction: a malformed line (InputError naming it) leaves the database untouched.
  void import_dump(std::string_view text);
  // Adds other databases' records: each opened read-only and verified first (InputError when
  // one is not a sound fusetune database, or is this database), then all of them in one
  // transaction. A record two have (same identity): the newer created_at wins, a measured
  // winner beats a shipped one, and equal times fall to a fixed key (dump_rules.cpp: table_rules), so
  // the result does not depend on the order of the files. Nothing is ever deleted: a record of
  // this database is only replaced by a newer one of the same identity.
  void merge_from(const std::string& other_path);
  void merge_from(const std::vector<std::string>& other_paths);

  [[nodiscard]] VerifyReport verify() const;

 private:
  Database(Connection conn, std::string path) : conn_(std::move(conn)), path_(std::move(path)) {}
  Connection conn_;
  std::string path_;
};

}  // namespace fusetune::db
