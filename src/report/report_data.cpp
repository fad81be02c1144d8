#include "report/report_data.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <set>
#include <string_view>

#include "common/error.hpp"
#include "spec/canonical.hpp"

namespace fusetune::report {

namespace {

template <typename Int>
bool parse_int(std::string_view s, Int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::optional<db::Environment> environment_from_fingerprint(const std::string& fingerprint) {
  // Read from the right: every field after the GPU name is a number or a version, so a ';' in
  // a GPU name cannot shift them. The round trip at the end refuses anything else.
  static constexpr std::array<std::string_view, 8> kKeys = {";templates=", ";cudnn=", ";nvrtc=", ";runtime=",
                                                            ";driver=",    ";mem=",   ";sms=",   ";cc="};
  std::array<std::string, kKeys.size()> values;
  std::string_view rest = fingerprint;
  for (std::size_t i = 0; i < kKeys.size(); ++i) {
    const std::size_t at = rest.rfind(kKeys[i]);
    if (at == std::string_view::npos) return std::nullopt;
    values[i] = rest.substr(at + kKeys[i].size());
    rest = rest.substr(0, at);
  }
  constexpr std::string_view kGpu = "gpu=";
  if (!rest.starts_with(kGpu)) return std::nullopt;

  db::Environment e;
  e.gpu_name = rest.substr(kGpu.size());
  e.templates_hash = values[0];
  e.cudnn = values[1];
  e.nvrtc = values[2];
  e.cuda_runtime = values[3];
  e.driver = values[4];
  const std::string_view cc = values[7];
  const std::size_t dot = cc.find('.');
  if (dot == std::string_view::npos || !parse_int(values[5], e.mem_bytes) || !parse_int(values[6], e.sm_count) ||
      !parse_int(cc.substr(0, dot), e.cc_major) || !parse_int(cc.substr(dot + 1), e.cc_minor))
    return std::nullopt;
  if (e.fingerprint() != fingerprint) return std::nullopt;
  return e;
}

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
    d.env = environment_from_fingerprint(d.env_fingerprint);
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
