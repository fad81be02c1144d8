#pragma once
// What `fusetune report` shows, gathered from the tuning database: one problem, one math mode,
// and the results of ONE environment (GPU and software), since times measured on different
// GPUs or library versions do not belong on one axis.
//
//   auto db = db::Database::open(path, db::OpenOptions{.read_only = true});
//   const ReportData data = gather_report(db, problem, "tf32", "");   // NotFoundError: nothing stored
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/records.hpp"
#include "spec/problem.hpp"

namespace fusetune::report {

struct ReportData {
  spec::Problem problem;
  std::string canonical;  // spec::canonical(problem)
  std::string key;        // spec::problem_key(problem)
  std::string math;       // tf32 | fp32
  std::string db_path;

  // The environment of the newest winner for the problem, else of the newest results.
  std::string env_fingerprint;
  std::optional<db::Environment> env;  // empty when no environment is stored under the fingerprint
  std::string env_chosen_by;           // why this environment: "the newest winner" | "the newest results"

  std::optional<db::WinnerRecord> winner;  // the winner stored for that environment, if any
  std::vector<db::ResultRecord> results;   // that environment's results only, as the database orders them
  std::size_t other_environments = 0;      // environments with results for the problem, left out
  std::size_t other_results = 0;           // ... and how many results they hold
};

// Throws NotFoundError (exit 4) when the database holds no result for the problem and math
// (on a GPU whose name contains `gpu`, when not empty).
[[nodiscard]] ReportData gather_report(const db::Database& database, const spec::Problem& problem,
                                       const std::string& math, const std::string& gpu);

}  // namespace fusetune::report
