#pragma once
// `fusetune smoke`: does it still build, verify and win? One check per line, for CI with or
// without a GPU (see docs/commands.md, "smoke").
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace fusetune::cli {

struct SmokeCheck {
  std::string name;
  enum class Outcome { passed, failed, skipped } outcome = Outcome::passed;
  std::string detail;
};

struct SmokeOptions {
  std::string db_path;
  unsigned jobs = 0;
  std::string worker_exe = "/proc/self/exe";
  bool stale = false;  // TEST-ONLY (FUSETUNE_TEST_STALE): slow the stored winners down on purpose
  // Which groups of checks run: compile, database, exports, gpu-tiny, winners (default: all).
  std::set<std::string> checks = {"compile", "database", "exports", "gpu-tiny", "winners"};
  std::function<void(const SmokeCheck&)> on_check;  // printed as they finish
};

std::vector<SmokeCheck> run_smoke(const SmokeOptions& options);

}  // namespace fusetune::cli
