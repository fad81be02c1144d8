#include "report/report_data.hpp"

#include <fmt/format.h>

#include <set>

#include "common/error.hpp"
#include "spec/canonical.hpp"

namespace fusetune::report {

ReportData gather_report(const db::Database& database, const spec::Problem& problem, const std::string& math,
                         const std::string& gpu) {
  ReportData d;
  d.problem = problem;
  d.canonical = spec::canonical(problem);
  d.key = spec::problem_key(problem);
  d.math = math;
  d.db_path = database.path();

  auto results = database.results(d.key, gpu, math);
  if (results.empty())
    throw NotFoundError(fmt::format("no {} results stored for {}{} in {}", math, d.canonical,
                                    gpu.empty() ? "" : " on a GPU matching '" + gpu + "'", d.db_path));
  const auto has_results = [&](const std::string& fp) {
    for (const auto& r : results)
      if (r.env_fingerprint == fp) return true;
    return false;
  };

  // Winners come newest first; a winner whose environment kept no results has nothing to plot.
  const auto winners = database.winners(d.key, gpu, math);
  for (const auto& w : winners) {
    if (!has_results(w.env.fingerprint())) continue;
    d.env_fingerprint = w.env.fingerprint();
    d.env = w.env;
    d.env_chosen_by = "the newest winner";
    d.winner = w;
    break;
  }
  if (d.env_fingerprint.empty()) {
    d.env_fingerprint = results.front().env_fingerprint;  // the newest environment comes first
    d.env = database.environment(d.env_fingerprint);
    d.env_chosen_by = "the newest results";
  }

  std::set<std::string> others;
  for (auto& r : results) {
    if (r.env_fingerprint == d.env_fingerprint) {
      d.results.push_back(std::move(r));
    } else {
      others.insert(r.env_fingerprint);
      ++d.other_results;
    }
  }
  d.other_environments = others.size();
  return d;
}

}  // namespace fusetune::report
