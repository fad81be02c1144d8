#include "codegen/variant_json.hpp"

namespace fusetune::codegen {

namespace {

std::string layout_str(spec::Layout l) {
  switch (l) {
    case spec::Layout::nchw: return "nchw";
    case spec::Layout::nhwc: return "nhwc";
    case spec::Layout::any: return "any";
  }
  return "nchw";
}

spec::Layout layout_from(const std::string& s) {
  if (s == "nhwc") return spec::Layout::nhwc;
  if (s == "any") return spec::Layout::any;
  return spec::Layout::nchw;
}

nlohmann::json step_to_json(const Step& s) {
  nlohmann::json j;
  j["kind"] = s.kind == StepKind::cudnn_conv ? "cudnn_conv" : "kernel";
  j["in"] = s.in;
  j["out"] = s.out;
  j["timed"] = s.timed;
  if (s.kind == StepKind::cudnn_conv) {
    j["layout"] = layout_str(s.conv_layout);
    j["with_bias"] = s.with_bias;
  } else {
    j["kernel"] = s.kernel_name;
    j["grid"] = s.launch.grid;
    j["block"] = s.launch.block;
    j["smem"] = s.launch.smem_bytes;
    j["args"] = s.args;
  }
  return j;
}

Step step_from_json(const nlohmann::json& j) {
  Step s;
  s.kind = j.at("kind").get<std::string>() == "cudnn_conv" ? StepKind::cudnn_conv : StepKind::kernel;
  s.in = j.value("in", "");
  s.out = j.value("out", "");
  s.timed = j.value("timed", true);
  if (s.kind == StepKind::cudnn_conv) {
    s.conv_layout = layout_from(j.value("layout", "nchw"));
    s.with_bias = j.value("with_bias", false);
  } else {
    s.kernel_name = j.at("kernel").get<std::string>();
    s.launch.grid = j.at("grid").get<std::array<uint32_t, 3>>();
    s.launch.block = j.at("block").get<std::array<uint32_t, 3>>();
    s.launch.smem_bytes = j.value("smem", 0u);
    s.args = j.at("args").get<std::vector<std::string>>();
  }
  return s;
}

}  // namespace

nlohmann::json params_to_json(const Variant& v) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, value] : v.params) j.push_back({name, value});
  return j;
}

nlohmann::json params_object(const Variant& v) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : v.params) j[name] = value;
  return j;
}

nlohmann::json to_json(const Variant& v) {
  nlohmann::json j;
  j["candidate"] = v.candidate;
  j["name"] = v.name;
  j["params"] = params_to_json(v);
  j["source"] = v.source;
  j["plan"] = nlohmann::json::array();
  for (const auto& s : v.plan) j["plan"].push_back(step_to_json(s));
  j["output_buffer"] = v.output_buffer;
  j["output_layout"] = layout_str(v.output_layout);
  j["kernel_bytes"] = v.kernel_bytes;
  return j;
}

Variant variant_from_json(const nlohmann::json& j) {
  Variant v;
  v.candidate = j.at("candidate").get<std::string>();
  v.name = j.at("name").get<std::string>();
  for (const auto& p : j.at("params")) v.params.emplace_back(p.at(0).get<std::string>(), p.at(1).get<int64_t>());
  v.source = j.value("source", "");
  for (const auto& s : j.at("plan")) v.plan.push_back(step_from_json(s));
  v.output_buffer = j.value("output_buffer", "out");
  v.output_layout = layout_from(j.value("output_layout", "nchw"));
  v.kernel_bytes = j.value("kernel_bytes", 0.0);
  return v;
}

}  // namespace fusetune::codegen
