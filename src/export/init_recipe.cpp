#include "export/init_recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "common/error.hpp"
#include "export/python_literal.hpp"

namespace fusetune::exporter {

using nlohmann::json;

// What the client reads back from a built module; anything else would be a keyword the export
// cannot vouch for.
const std::map<std::string, std::set<std::string>>& init_unit_modules() {
  static const std::set<std::string> conv = {"in_channels", "out_channels", "kernel_size", "stride", "padding",
                                             "dilation",    "groups",       "bias"};
  static const std::set<std::string> conv_t = [] {
    auto s = conv;
    s.insert("output_padding");
    return s;
  }();
  static const std::set<std::string> batch = {"num_features", "eps", "momentum", "affine", "track_running_stats"};
  static const std::map<std::string, std::set<std::string>> m = {
      {"Conv1d", conv},
      {"Conv2d", conv},
      {"Conv3d", conv},
      {"ConvTranspose1d", conv_t},
      {"ConvTranspose2d", conv_t},
      {"ConvTranspose3d", conv_t},
      {"Linear", {"in_features", "out_features", "bias"}},
      {"BatchNorm1d", batch},
      {"BatchNorm2d", batch},
      {"BatchNorm3d", batch},
      {"InstanceNorm1d", batch},
      {"InstanceNorm2d", batch},
      {"InstanceNorm3d", batch},
      {"GroupNorm", {"num_groups", "num_channels", "eps", "affine"}},
      {"LayerNorm", {"normalized_shape", "eps", "elementwise_affine", "bias"}},
  };
  return m;
}

const std::set<std::string>& init_unit_laws() {
  static const std::set<std::string> laws = {"randn", "rand", "ones", "zeros"};
  return laws;
}

namespace {

constexpr size_t kMaxUnits = 64;
constexpr size_t kMaxRank = 8;

struct Ctx {
  const std::string& path;
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("--init {}: {}", path, what));
  }
};

// A plain Python attribute name that nn.Module does not own: letters, digits, '_', not first '_'.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 64 || s[0] == '_' || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool small_int(const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= (int64_t{1} << 40); }

// A keyword's value as a Python literal: a non-negative int, a finite float, a bool, or a list of
// up to 8 non-negative ints.
std::string keyword_literal(const Ctx& c, const std::string& unit, const std::string& key, const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (small_int(v)) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) c.fail(fmt::format("unit '{}': {} is not finite", unit, key));
    return py_float(d);
  }
  if (v.is_array() && !v.empty() && v.size() <= kMaxRank && std::all_of(v.begin(), v.end(), small_int)) {
    std::vector<std::string> items;
    for (const auto& x : v) items.push_back(std::to_string(x.get<int64_t>()));
    return py_list(items);
  }
  c.fail(fmt::format("unit '{}': {} must be a bool, a non-negative int, a float or a list of ints", unit, key));
}

struct Unit {
  std::string name, kind;  // kind: an nn class or "param"
};

std::string unit_literal(const Ctx& c, const json& u, Unit& out) {
  if (!u.is_object() || !u.contains("name") || !u["name"].is_string())
    c.fail("every unit needs a \"name\" (string)");
  out.name = u["name"].get<std::string>();
  if (!plain_name(out.name))
    c.fail(fmt::format("unit name {}: a plain attribute name (letters, digits, '_', not starting with '_')",
                       json(out.name).dump()));
  if (u.contains("module")) {
    if (!u["module"].is_string() || !init_unit_modules().contains(u["module"].get<std::string>()))
      c.fail(fmt::format("unit '{}': module {} is not one this export rebuilds", out.name, u["module"].dump()));
    out.kind = u["module"].get<std::string>();
    const auto& allowed = init_unit_modules().at(out.kind);
    if (!u.contains("args") || !u["args"].is_object()) c.fail(fmt::format("unit '{}': \"args\" must be an object", out.name));
    std::string kw = "{";
    for (const auto& [key, value] : u["args"].items()) {
      if (!allowed.contains(key)) c.fail(fmt::format("unit '{}': {} takes no keyword {}", out.name, out.kind, json(key).dump()));
      kw += fmt::format("{}{}: {}", kw.size() > 1 ? ", " : "", py_str(key), keyword_literal(c, out.name, key, value));
    }
    return fmt::format("({}, {}, {}}})", py_str(out.name), py_str(out.kind), kw);
  }
  out.kind = "param";
  if (!u.contains("shape") || !u["shape"].is_array() || u["shape"].size() > kMaxRank ||
      !std::all_of(u["shape"].begin(), u["shape"].end(), small_int))
    c.fail(fmt::format("unit '{}': a parameter needs \"shape\", a list of up to 8 non-negative ints", out.name));
  if (!u.contains("law") || !u["law"].is_string() || !init_unit_laws().contains(u["law"].get<std::string>()))
    c.fail(fmt::format("unit '{}': \"law\" must be one of randn, rand, ones, zeros", out.name));
  double scale = 1.0;
  if (u.contains("scale")) {
    if (!u["scale"].is_number() || !std::isfinite(u["scale"].get<double>()))
      c.fail(fmt::format("unit '{}': \"scale\" must be a finite number", out.name));
    scale = u["scale"].get<double>();
  }
  std::vector<std::string> dims;
  for (const auto& d : u["shape"]) dims.push_back(std::to_string(d.get<int64_t>()));
  return fmt::format("({}, \"param\", {{\"shape\": {}, \"law\": {}, \"scale\": {}}})", py_str(out.name),
                     py_list(dims), py_str(u["law"].get<std::string>()), py_float(scale));
}

// Whether `where` names a unit tensor that exists: "<param unit>" or "<module unit>.weight|bias".
bool names_unit_tensor(const std::map<std::string, std::string>& kinds, const std::string& where) {
  const auto dot = where.find('.');
  const auto it = kinds.find(where.substr(0, dot));
  if (it == kinds.end()) return false;
  if (dot == std::string::npos) return it->second == "param";
  const std::string attr = where.substr(dot + 1);
  return it->second != "param" && (attr == "weight" || attr == "bias");
}

bool names_input(const std::string& where) {
  if (!where.starts_with("input:") || where.size() < 7 || where.size() > 9) return false;
  const std::string i = where.substr(6);
  return std::all_of(i.begin(), i.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }) &&
         i[0] != '0';
}

}  // namespace

InitRecipe parse_init_recipe(const std::string& text, const std::string& path, const codegen::Variant& v) {
  const Ctx c{path};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    c.fail(fmt::format("not JSON ({})", e.what()));
  }
  if (!doc.is_object() || !doc.contains("units") || !doc["units"].is_array() || !doc.contains("bind") ||
      !doc["bind"].is_object())
    c.fail("expected an object with \"units\" (a list) and \"bind\" (an object)");
  if (doc["units"].size() > kMaxUnits) c.fail(fmt::format("more than {} units", kMaxUnits));

  InitRecipe out;
  std::map<std::string, std::string> kinds;  // unit name -> kind
  std::vector<std::string> literals;
  for (const auto& u : doc["units"]) {
    Unit unit;
    literals.push_back(unit_literal(c, u, unit));
    if (!kinds.emplace(unit.name, unit.kind).second) c.fail(fmt::format("unit '{}' twice", unit.name));
  }
  out.units_literal = literals.empty() ? "[]" : "[\n    " + fmt::format("{}", fmt::join(literals, ",\n    ")) + ",\n]";

  // The buffers the plan reads from outside: each bound exactly once, x always to forward's first argument.
  out.bind.emplace_back("x", "input:0");
  std::set<std::string> wanted;
  for (const auto& b : v.buffers) {
    if (b.kind == codegen::BufferKind::weights || b.kind == codegen::BufferKind::bias ||
        b.kind == codegen::BufferKind::param || b.kind == codegen::BufferKind::extra)
      wanted.insert(b.name);
  }
  for (const auto& [name, where] : doc["bind"].items()) {
    if (!wanted.contains(name))
      c.fail(fmt::format("bind names {}, which is no buffer of the plan {} reads from the model", json(name).dump(),
                         v.name));
    if (!where.is_string()) c.fail(fmt::format("bind {}: the value must be a string", name));
    const std::string w = where.get<std::string>();
    if (!names_input(w) && !names_unit_tensor(kinds, w))
      c.fail(fmt::format("bind {}: {} is neither \"input:<i>\" (i >= 1) nor a unit's parameter "
                         "(\"<param unit>\", \"<module unit>.weight\" or \".bias\")",
                         name, json(w).dump()));
    out.bind.emplace_back(name, w);
    wanted.erase(name);
  }
  if (!wanted.empty()) c.fail(fmt::format("bind has no entry for the plan's buffer '{}'", *wanted.begin()));
  return out;
}

}  // namespace fusetune::exporter
