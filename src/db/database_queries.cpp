// Database's read side: winners and results by problem, GPU and math, and the top-k that
// seeds a re-tune under new library versions.
#include <fmt/format.h>

#include "db/database.hpp"
#include "db/statement.hpp"

namespace fusetune::db {

namespace {

constexpr std::string_view kWinnerSelect =
    "SELECT e.gpu_name, e.cc_major, e.cc_minor, e.sm_count, e.mem_bytes, e.driver, e.cuda_runtime, e.nvrtc, e.cudnn, "
    "e.templates_hash, p.key, p.canonical, w.math, w.candidate, w.variant_name, w.variant_json, w.compile_options, "
    "w.cubin, w.ptx, w.time_median_ms, w.time_spread, w.unfused_median_ms, w.cudnn_median_ms, w.cudnn_algo, "
    "w.shipped, w.created_at, w.conv_choices "
    "FROM winners w JOIN environments e ON e.id = w.env_id JOIN problems p ON p.id = w.problem_id ";

// The environment in columns 0..9 of a select that starts with kEnvironmentColumns.
constexpr std::string_view kEnvironmentColumns =
    "e.gpu_name, e.cc_major, e.cc_minor, e.sm_count, e.mem_bytes, e.driver, e.cuda_runtime, e.nvrtc, e.cudnn, "
    "e.templates_hash";

Environment read_environment(const Statement& s) {
  Environment e;
  e.gpu_name = s.column_text(0);
  e.cc_major = s.column_int(1);
  e.cc_minor = s.column_int(2);
  e.sm_count = s.column_int(3);
  e.mem_bytes = s.column_int64(4);
  e.driver = s.column_text(5);
  e.cuda_runtime = s.column_text(6);
  e.nvrtc = s.column_text(7);
  e.cudnn = s.column_text(8);
  e.templates_hash = s.column_text(9);
  return e;
}

WinnerRecord read_winner(const Statement& s) {
  WinnerRecord w;
  w.env = read_environment(s);
  w.problem_key = s.column_text(10);
  w.canonical = s.column_text(11);
  w.math = s.column_text(12);
  w.candidate = s.column_text(13);
  w.variant_name = s.column_text(14);
  w.variant_json = s.column_text(15);
  w.compile_options = s.column_text(16);
  w.cubin = s.column_blob(17);
  w.ptx = s.column_text(18);
  w.time_median_ms = s.column_real(19);
  w.time_spread = s.column_real(20);
  w.unfused_median_ms = s.column_real(21);
  w.cudnn_median_ms = s.column_real(22);
  w.cudnn_algo = s.column_text(23);
  w.shipped = s.column_int(24) != 0;
  w.created_at = s.column_text(25);
  w.conv_choices = s.column_text(26);
  return w;
}

constexpr std::string_view kResultSelect =
    "SELECT p.key, p.canonical, r.math, r.candidate, r.variant_name, r.params_json, r.status, r.reason, "
    "r.log_excerpt, r.registers, r.spills, r.time_min_ms, r.time_median_ms, r.time_max_ms, r.time_count, "
    "r.kernel_median_ms, r.gbps, r.pct_copy, r.max_abs, r.max_rel, r.rel_l2, r.created_at, e.fingerprint, "
    "r.time_round, r.worst_ratio, r.rel_l2_limit, r.gpu "
    "FROM results r JOIN environments e ON e.id = r.env_id JOIN problems p ON p.id = r.problem_id ";

ResultRecord read_result(const Statement& s) {
  ResultRecord r;
  r.problem_key = s.column_text(0);
  r.canonical = s.column_text(1);
  r.math = s.column_text(2);
  r.candidate = s.column_text(3);
  r.variant_name = s.column_text(4);
  r.params_json = s.column_text(5);
  r.status = s.column_text(6);
  r.reason = s.column_text(7);
  r.log_excerpt = s.column_text(8);
  r.registers = s.column_int(9);
  r.spills = s.column_int(10);
  r.time_min_ms = s.column_real(11);
  r.time_median_ms = s.column_real(12);
  r.time_max_ms = s.column_real(13);
  r.time_count = s.column_int(14);
  r.kernel_median_ms = s.column_real(15);
  r.gbps = s.column_real(16);
  r.pct_copy = s.column_real(17);
  r.max_abs = s.column_real(18);
  r.max_rel = s.column_real(19);
  r.rel_l2 = s.column_real(20);
  r.created_at = s.column_text(21);
  r.env_fingerprint = s.column_text(22);
  r.time_round = s.column_text(23);
  r.worst_ratio = s.column_real(24);
  r.rel_l2_limit = s.column_real(25);
  r.gpu = s.column_int(26);
  return r;
}

// ?1 problem key or NULL, ?2 GPU name substring ('' = any; instr, not LIKE, so '%' and '_'
// in the user's text match themselves), ?3 math or NULL.
constexpr std::string_view kFilter =
    "WHERE (?1 IS NULL OR p.key = ?1) AND (?2 = '' OR instr(lower(e.gpu_name), lower(?2)) > 0) "
    "AND (?3 IS NULL OR {}.math = ?3) ";

void bind_filter(Statement& s, const std::optional<std::string>& key, const std::string& gpu,
                 const std::optional<std::string>& math) {
  key ? s.bind(1, *key) : s.bind_null(1);
  s.bind(2, gpu);
  math ? s.bind(3, *math) : s.bind_null(3);
}

}  // namespace

std::optional<Environment> Database::environment(const std::string& fingerprint) const {
  Statement s(conn_, fmt::format("SELECT {} FROM environments e WHERE e.fingerprint = ?1", kEnvironmentColumns));
  s.bind(1, fingerprint);
  if (!s.step()) return std::nullopt;
  return read_environment(s);
}

std::optional<WinnerRecord> Database::winner(const std::string& problem_key, const std::string& math,
                                             const std::string& env_fingerprint) const {
  Statement s(conn_, std::string(kWinnerSelect) + "WHERE p.key = ?1 AND w.math = ?2 AND e.fingerprint = ?3");
  s.bind(1, problem_key);
  s.bind(2, math);
  s.bind(3, env_fingerprint);
  if (!s.step()) return std::nullopt;
  return read_winner(s);
}

std::vector<WinnerRecord> Database::winners(const std::optional<std::string>& problem_key,
                                            const std::string& gpu_substring,
                                            const std::optional<std::string>& math) const {
  Statement s(conn_, std::string(kWinnerSelect) + fmt::format(fmt::runtime(kFilter), "w") +
                         "ORDER BY w.created_at DESC, w.rowid DESC");
  bind_filter(s, problem_key, gpu_substring, math);
  std::vector<WinnerRecord> out;
  while (s.step()) out.push_back(read_winner(s));
  return out;
}

std::vector<ResultRecord> Database::results(const std::optional<std::string>& problem_key,
                                            const std::string& gpu_substring,
                                            const std::optional<std::string>& math) const {
  Statement s(conn_, std::string(kResultSelect) + fmt::format(fmt::runtime(kFilter), "r") +
                         "ORDER BY e.created_at DESC, e.id DESC, p.key, r.math, r.status <> 'ok', "
                         "r.time_median_ms IS NULL, r.time_median_ms, r.variant_name, r.params_json");
  bind_filter(s, problem_key, gpu_substring, math);
  std::vector<ResultRecord> out;
  while (s.step()) out.push_back(read_result(s));
  return out;
}

std::vector<ResultRecord> Database::top_results(const std::string& problem_key, const std::string& math,
                                                const std::string& hardware_fingerprint, int k) const {
  if (k <= 0) return {};
  constexpr std::string_view kUsable =
      "p.key = ?1 AND r.math = ?2 AND r.status = 'ok' AND r.candidate NOT IN ('unfused', 'cudnn') "
      "AND r.time_median_ms IS NOT NULL ";
  Statement s(conn_, std::string(kResultSelect) +
                         fmt::format("WHERE {0} AND r.env_id = ("
                                     "  SELECT e2.id FROM environments e2 WHERE e2.hardware_fingerprint = ?3 AND EXISTS ("
                                     "    SELECT 1 FROM results r JOIN problems p ON p.id = r.problem_id "
                                     "    WHERE r.env_id = e2.id AND {0}) "
                                     "  ORDER BY e2.created_at DESC, e2.id DESC LIMIT 1) "
                                     "ORDER BY r.time_median_ms, r.variant_name, r.params_json LIMIT ?4",
                                     kUsable));
  s.bind(1, problem_key);
  s.bind(2, math);
  s.bind(3, hardware_fingerprint);
  s.bind(4, k);
  std::vector<ResultRecord> out;
  while (s.step()) out.push_back(read_result(s));
  return out;
}

}  // namespace fusetune::db
