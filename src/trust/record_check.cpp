#include "trust/record_check.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "common/bounded_json.hpp"
#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/support.hpp"
#include "protocol/protocol.hpp"
#include "protocol/status.hpp"

namespace fusetune::trust {

namespace {

// Free text fusetune prints (GPU names, reasons, compiler logs): bounded, valid UTF-8, no
// control or invisible characters (common/terminal_text.hpp) other than newline and tab in logs.
bool plain_text(const std::string& s, size_t max, bool multiline = false) {
  if (s.size() > max) return false;
  std::string t = s;
  if (multiline) std::replace_if(t.begin(), t.end(), [](char c) { return c == '\n' || c == '\t'; }, ' ');
  return text::printable(t) == t;
}

// Version strings and hashes: "13.0", "9.19.0", "aa58678e4845ff89".
bool token(const std::string& s, size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '.' || ch == '-' ||
           ch == '_';
  });
}

// A date as fusetune writes it (db/clock.cpp): "2026-12-04T15:53:17.437Z". It goes into export
// headers, JSON and CSV, so nothing else passes; empty means "not yet written".
bool timestamp(const std::string& s) {
  if (s.empty()) return true;
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  if (s.size() < kShape.size() + 1 || s.size() > kShape.size() + 11 || s.back() != 'Z') return false;
  for (size_t i = 0; i < kShape.size(); ++i)
    if (kShape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != kShape[i]) return false;
  const std::string_view rest = std::string_view(s).substr(kShape.size(), s.size() - kShape.size() - 1);
  if (rest.empty()) return true;
  return rest.size() >= 2 && rest[0] == '.' &&
         std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool time_like(double v) { return std::isnan(v) || (std::isfinite(v) && v >= 0 && v < 1e9); }
bool figure_like(double v) { return std::isnan(v) || v >= 0; }  // error figures may be infinite

bool known_math(const std::string& m) { return m == "tf32" || m == "fp32"; }

// The problem a record names: its canonical spec parses, is canonical, and hashes to its key.
std::string check_problem(const std::string& key, const std::string& canonical) {
  if (canonical.size() > 4096) return "problem spec longer than 4096 characters";
  try {
    const spec::Problem p = spec::parse(canonical);
    if (spec::canonical(p) != canonical) return "problem spec is not in canonical form";
    if (spec::problem_key(p) != key) return fmt::format("problem key {} is not the spec's", text::excerpt(key, 20));
    // A valid version-2 problem no candidate takes yet: no variant of this fusetune can be its
    // winner, and the exporters and the checks below read conv2d chains only.
    if (spec::why_not_tunable(p)) return "its problem is one no candidate of this fusetune takes (spec::why_not_tunable)";
  } catch (const InputError& e) {
    return fmt::format("problem spec does not parse ({})", text::excerpt(e.what()));
  }
  return "";
}

}  // namespace

std::string check_environment(const db::Environment& e) {
  if (!plain_text(e.gpu_name, 128) || e.gpu_name.empty()) return "GPU name is empty, too long or has control characters";
  if (e.cc_major < 1 || e.cc_major > 20 || e.cc_minor < 0 || e.cc_minor > 9) return "compute capability out of range";
  if (e.sm_count < 1 || e.sm_count > 100000) return "SM count out of range";
  if (e.mem_bytes < 0) return "memory size is negative";
  for (const auto& [name, value] : {std::pair{"driver", e.driver}, {"CUDA runtime", e.cuda_runtime},
                                    {"NVRTC", e.nvrtc}, {"cuDNN", e.cudnn}, {"templates hash", e.templates_hash}})
    if (!token(value, 32)) return fmt::format("{} version '{}' is not a version", name, text::excerpt(value, 32));
  return "";
}

std::string check_result(const db::ResultRecord& r) {
  if (std::string e = check_problem(r.problem_key, r.canonical); !e.empty()) return e;
  if (!known_math(r.math)) return "math is neither tf32 nor fp32";
  if (!codegen::candidate_from_name(r.candidate)) return fmt::format("unknown candidate '{}'", text::excerpt(r.candidate, 32));
  if (!codegen::is_variant_name(r.variant_name)) return "variant name is not a name";
  try {
    const auto params = parse_bounded(r.params_json);
    if (!params.is_object() || params.size() > 64) return "parameters are not an object of at most 64 entries";
    for (const auto& [k, v] : params.items())
      if (!codegen::is_identifier(k, 32) || !v.is_number_integer()) return "a parameter is not name = integer";
  } catch (const nlohmann::json::exception&) {
    return "parameters are not JSON";
  } catch (const JsonTooDeep&) {
    return "parameters nest deeper than 16 levels";
  }
  if (!protocol::status_from_name(r.status)) return fmt::format("unknown status '{}'", text::excerpt(r.status, 32));
  if (!plain_text(r.reason, 4096, true) || !plain_text(r.log_excerpt, 65536, true))
    return "reason or compiler log too long or with control characters";
  if (r.registers < -1 || r.registers > 65536 || r.spills < 0 || r.time_count < 0) return "a count is out of range";
  for (double v : {r.time_min_ms, r.time_median_ms, r.time_max_ms, r.kernel_median_ms, r.gbps, r.pct_copy})
    if (!time_like(v)) return "a time or rate is negative or not finite";
  for (double v : {r.max_abs, r.max_rel, r.rel_l2, r.worst_ratio, r.rel_l2_limit})
    if (!figure_like(v)) return "an error figure is negative";
  if (!timestamp(r.created_at)) return "its date is not an ISO 8601 UTC time as fusetune writes it";
  if (!r.time_round.empty() && r.time_round != "first pass" && r.time_round != "finalists" &&
      r.time_round != "confirmation")
    return "unknown timing round";
  return "";
}

std::string check_winner(const db::WinnerRecord& w) {
  if (std::string e = check_environment(w.env); !e.empty()) return e;
  if (std::string e = check_problem(w.problem_key, w.canonical); !e.empty()) return e;
  if (!known_math(w.math)) return "math is neither tf32 nor fp32";
  if (!codegen::is_variant_name(w.variant_name)) return "variant name is not a name";
  if (w.variant_json.size() > (size_t(16) << 20) || w.cubin.size() > (size_t(16) << 20) ||
      w.ptx.size() > (size_t(16) << 20))
    return "variant, CUBIN or PTX larger than 16 MiB";
  if (!plain_text(w.compile_options, 4096) || !plain_text(w.cudnn_algo, 512) || !plain_text(w.created_at, 64))
    return "compile options, cuDNN algorithm or date too long or with control characters";
  if (!timestamp(w.created_at)) return "its date is not an ISO 8601 UTC time as fusetune writes it";
  for (double v : {w.time_median_ms, w.time_spread, w.unfused_median_ms, w.cudnn_median_ms})
    if (!time_like(v)) return "a time is negative or not finite";
  if (!w.conv_choices.empty()) {
    try {
      for (const auto& [layout, ch] : protocol::conv_choices_from_json(parse_bounded(w.conv_choices)))
        if (layout < 0 || layout > 1 || !plain_text(ch.label, 128) || !plain_text(ch.engine_name, 128))
          return "cuDNN algorithm choices out of range";
    } catch (const std::exception&) {
      return "cuDNN algorithm choices are not the JSON fusetune writes";
    }
  }
  codegen::Variant v;
  try {
    v = codegen::variant_from_json(parse_bounded(w.variant_json));
  } catch (const nlohmann::json::exception&) {
    return "its variant is not JSON";
  } catch (const JsonTooDeep&) {
    return "its variant nests deeper than 16 levels";
  } catch (const InputError& e) {
    return text::excerpt(e.what(), 200);
  }
  if (v.name != w.variant_name) return "its variant is not the one the record names";
  if (codegen::candidate_name(v.candidate) != w.candidate) return "its candidate is not its variant's";
  if (std::string bad = codegen::check_variant(v, spec::parse(w.canonical)); !bad.empty()) return text::excerpt(bad, 200);
  return "";
}

}  // namespace fusetune::trust
