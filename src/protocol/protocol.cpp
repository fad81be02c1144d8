#include "protocol/protocol.hpp"

#include <cmath>
#include <limits>

#include "codegen/variant_json.hpp"
#include "common/error.hpp"

namespace fusetune::protocol {

namespace {

MathMode math_from(const nlohmann::json& j) {
  const auto m = parse_math_mode(j.get<std::string>());
  if (!m) throw Error(ExitCode::failure, "worker protocol: unknown math mode");
  return *m;
}

TimeRound round_from(int r) {
  switch (r) {
    case 1: return TimeRound::finalists;
    case 2: return TimeRound::confirmation;
    default: return TimeRound::first_pass;
  }
}

int round_index(TimeRound r) {
  switch (r) {
    case TimeRound::first_pass: return 0;
    case TimeRound::finalists: return 1;
    case TimeRound::confirmation: return 2;
  }
  return 0;
}

nlohmann::json timing_to_json(const TimingPolicy& p) {
  return {{"warmup", p.warmup}, {"min_reps", p.min_reps}, {"max_reps", p.max_reps}, {"max_seconds", p.max_seconds},
          {"target_spread", p.target_spread}, {"behind_ms", p.behind_ms}};
}

TimingPolicy timing_from_json(const nlohmann::json& j) {
  TimingPolicy p;
  p.warmup = j.at("warmup");
  p.min_reps = j.at("min_reps");
  p.max_reps = j.at("max_reps");
  p.max_seconds = j.at("max_seconds");
  p.target_spread = j.at("target_spread");
  p.behind_ms = j.value("behind_ms", 0.0);
  return p;
}

// JSON has no inf or NaN (nlohmann writes null): error figures of a wrong result often are
// infinite (a NaN where the reference is finite), so they travel as strings then.
nlohmann::json num(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

double num_from(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json error_to_json(const ErrorFigures& e) {
  return {{"max_abs", num(e.max_abs)},           {"max_rel", num(e.max_rel)},
          {"rel_l2", num(e.rel_l2)},             {"rel_l2_limit", num(e.rel_l2_limit)},
          {"worst_ratio", num(e.worst_ratio)},   {"unchecked", e.unchecked}};
}

ErrorFigures error_from_json(const nlohmann::json& j) {
  ErrorFigures e;
  e.max_abs = num_from(j.at("max_abs"));
  e.max_rel = num_from(j.at("max_rel"));
  e.rel_l2 = num_from(j.at("rel_l2"));
  e.rel_l2_limit = num_from(j.at("rel_l2_limit"));
  e.worst_ratio = num_from(j.at("worst_ratio"));
  e.unchecked = j.at("unchecked");
  return e;
}

}  // namespace

nlohmann::json key_to_json(const codegen::EngineKey& k);
codegen::EngineKey key_from_json(const nlohmann::json& j);

nlohmann::json to_json(const ConvChoices& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [layout, ch] : c) {
    j[std::to_string(layout)] = {{"algo", ch.algo}, {"math_type", ch.math_type}, {"time_ms", ch.time_ms},
                                 {"label", ch.label}};
    // Only when set: stored records of legacy choices stay byte for byte what they were.
    if (ch.engine) j[std::to_string(layout)]["engine"] = key_to_json(*ch.engine);
    if (!ch.engine_name.empty()) j[std::to_string(layout)]["engine_name"] = ch.engine_name;
  }
  return j;
}

ConvChoices conv_choices_from_json(const nlohmann::json& j) {
  ConvChoices c;
  for (const auto& [k, v] : j.items()) {
    ConvChoice ch;
    ch.algo = v.at("algo");
    ch.math_type = v.at("math_type");
    ch.time_ms = v.at("time_ms");
    ch.label = v.at("label");
    if (v.contains("engine")) ch.engine = key_from_json(v.at("engine"));
    if (v.contains("engine_name")) ch.engine_name = v.at("engine_name").get<std::string>();
    c[std::stoi(k)] = ch;
  }
  return c;
}

nlohmann::json to_json(const TimeFigures& t) {
  nlohmann::json steps = nlohmann::json::array(), samples = nlohmann::json::array();
  for (double v : t.step_median_ms) steps.push_back(num(v));
  for (double v : t.samples) samples.push_back(num(v));
  return {{"min", num(t.min_ms)},   {"median", num(t.median_ms)},
          {"max", num(t.max_ms)},   {"count", t.count},
          {"spread", num(t.spread)}, {"kernel_median", num(t.kernel_median_ms)},
          {"steps", steps},         {"batch", t.batch},
          {"round", round_index(t.round)}, {"samples", samples}};
}

TimeFigures time_from_json(const nlohmann::json& j) {
  TimeFigures t;
  t.min_ms = num_from(j.at("min"));
  t.median_ms = num_from(j.at("median"));
  t.max_ms = num_from(j.at("max"));
  t.count = j.at("count");
  t.spread = num_from(j.at("spread"));
  t.kernel_median_ms = num_from(j.at("kernel_median"));
  for (const auto& v : j.at("steps")) t.step_median_ms.push_back(num_from(v));
  t.batch = j.at("batch");
  t.round = round_from(j.at("round").get<int>());
  for (const auto& v : j.at("samples")) t.samples.push_back(num_from(v));
  return t;
}

nlohmann::json to_json(const SetupRequest& r) {
  return {{"cmd", "setup"}, {"problem", r.problem}, {"math", math_mode_name(r.math)}, {"device", r.device},
          {"seed", r.seed}, {"draws", r.draws}, {"inputs", r.inputs == InputRange::wide ? "wide" : "uniform"},
          {"conv_choices", to_json(r.conv_choices)}, {"conv_graph_head", r.conv_graph_head}};
}

SetupRequest setup_request_from_json(const nlohmann::json& j) {
  SetupRequest r;
  r.problem = j.at("problem");
  r.math = math_from(j.at("math"));
  r.device = j.at("device");
  r.seed = j.at("seed");
  r.draws = j.at("draws");
  const std::string inputs = j.at("inputs");
  if (inputs != "uniform" && inputs != "wide") throw Error(ExitCode::failure, "worker protocol: unknown input range");
  r.inputs = inputs == "wide" ? InputRange::wide : InputRange::uniform;
  r.conv_choices = conv_choices_from_json(j.at("conv_choices"));
  r.conv_graph_head = std::max(0, j.value("conv_graph_head", 0));
  return r;
}

nlohmann::json to_json(const SetupReply& r) {
  return {{"device", r.device},   {"copy_gbps", r.copy_gbps}, {"setup_s", r.setup_s},
          {"draws_s", r.draws_s}, {"handles_s", r.handles_s}, {"begun_s", r.begun_s}};
}

SetupReply setup_reply_from_json(const nlohmann::json& j) {
  SetupReply r;
  r.device = j.at("device");
  r.copy_gbps = j.at("copy_gbps");
  r.setup_s = j.at("setup_s");
  r.draws_s = j.value("draws_s", 0.0);
  r.handles_s = j.value("handles_s", 0.0);
  r.begun_s = j.value("begun_s", 0.0);
  return r;
}

nlohmann::json to_json(const RunRequest& r) {
  nlohmann::json j = {{"cmd", "run"}, {"variant", codegen::to_json(r.variant)}, {"cubin_path", r.cubin_path}, {"time", r.time},
          {"timing", timing_to_json(r.timing)}, {"conv_choices", to_json(r.conv_choices)}};
  if (!r.prebuild.empty()) {
    nlohmann::json& a = j["prebuild"] = nlohmann::json::array();
    for (const auto& v : r.prebuild) a.push_back(codegen::to_json(v));
  }
  return j;
}

RunRequest run_request_from_json(const nlohmann::json& j) {
  RunRequest r;
  r.variant = codegen::variant_from_json(j.at("variant"));
  r.cubin_path = j.at("cubin_path");
  r.time = j.at("time");
  r.timing = timing_from_json(j.at("timing"));
  if (j.contains("conv_choices")) r.conv_choices = conv_choices_from_json(j.at("conv_choices"));
  if (j.contains("prebuild"))
    for (const auto& v : j.at("prebuild")) r.prebuild.push_back(codegen::variant_from_json(v));
  return r;
}

nlohmann::json to_json(const RunReply& r) {
  nlohmann::json j = {{"status", status_name(r.status)}, {"reason", r.reason}, {"accuracy", error_to_json(r.error)},
                      {"timed", r.timed}, {"convs", r.convs}, {"conv_choices", to_json(r.conv_choices)},
                      {"notes", r.notes}};
  if (r.timed) j["time"] = to_json(r.time);
  return j;
}

RunReply run_reply_from_json(const nlohmann::json& j) {
  RunReply r;
  r.status = status_from_name(j.at("status").get<std::string>()).value_or(Status::faulted);
  r.reason = j.at("reason");
  r.error = error_from_json(j.at("accuracy"));
  r.timed = j.at("timed");
  if (r.timed) r.time = time_from_json(j.at("time"));
  r.convs = j.at("convs").get<std::vector<std::string>>();
  r.conv_choices = conv_choices_from_json(j.at("conv_choices"));
  r.notes = j.at("notes").get<std::vector<std::string>>();
  return r;
}

nlohmann::json to_json(const RetimeRequest& r) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : r.entries) entries.push_back({{"variant", codegen::to_json(e.variant)}, {"cubin_path", e.cubin_path}});
  return {{"cmd", "retime"}, {"entries", entries}, {"rounds", r.rounds}, {"round", round_index(r.round)},
          {"sustained", r.sustained}, {"turns", r.turns}};
}

RetimeRequest retime_request_from_json(const nlohmann::json& j) {
  RetimeRequest r;
  for (const auto& e : j.at("entries"))
    r.entries.push_back({codegen::variant_from_json(e.at("variant")), e.at("cubin_path").get<std::string>()});
  r.rounds = j.at("rounds");
  r.round = round_from(j.at("round").get<int>());
  r.sustained = j.value("sustained", false);
  r.turns = j.value("turns", 0);
  return r;
}

nlohmann::json to_json(const RetimeReply& r) {
  nlohmann::json res = nlohmann::json::object();
  for (const auto& [name, t] : r.results) res[name] = to_json(t);
  return {{"results", res}, {"notes", r.notes}};
}

RetimeReply retime_reply_from_json(const nlohmann::json& j) {
  RetimeReply r;
  for (const auto& [name, t] : j.at("results").items()) r.results[name] = time_from_json(t);
  if (j.contains("notes")) r.notes = j.at("notes").get<std::vector<std::string>>();
  return r;
}

nlohmann::json key_to_json(const codegen::EngineKey& k) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const auto& [t, v] : k.knobs) knobs.push_back({t, v});
  return {{"engine", k.engine}, {"knobs", knobs}};
}

codegen::EngineKey key_from_json(const nlohmann::json& j) {
  codegen::EngineKey k;
  k.engine = j.at("engine").get<int64_t>();
  for (const auto& kv : j.at("knobs")) k.knobs.emplace_back(kv.at(0).get<int64_t>(), kv.at(1).get<int64_t>());
  return k;
}

nlohmann::json to_json(const EnginesRequest& r) {
  return {{"cmd", "engines"}, {"variant", codegen::to_json(r.variant)}, {"most", r.most}, {"build", r.build}};
}

EnginesRequest engines_request_from_json(const nlohmann::json& j) {
  return EnginesRequest{codegen::variant_from_json(j.at("variant")), j.value("most", 0), j.value("build", true)};
}

nlohmann::json to_json(const EnginesReply& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : r.engines)
    list.push_back({{"key", key_to_json(e.key)}, {"name", e.name}, {"built", e.built}, {"reason", e.reason}});
  return {{"refused", r.refused}, {"reason", r.reason}, {"engines", list}, {"build_s", r.build_s}};
}

EnginesReply engines_reply_from_json(const nlohmann::json& j) {
  EnginesReply r;
  r.refused = j.at("refused").get<bool>();
  r.reason = j.at("reason").get<std::string>();
  r.build_s = j.at("build_s").get<double>();
  for (const auto& e : j.at("engines"))
    r.engines.push_back({key_from_json(e.at("key")), e.at("name").get<std::string>(), e.at("built").get<bool>(),
                         e.at("reason").get<std::string>()});
  return r;
}

}  // namespace fusetune::protocol
