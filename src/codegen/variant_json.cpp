#include "codegen/variant_json.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>

#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "spec/main_parser.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen {

namespace {

// An integer field of a record that may come from anyone (an imported dump): a JSON integer that
// T holds, else InputError. nlohmann's own get<T>() of a float such as 1e300 is undefined
// behaviour (the fuzzer found one in a buffer's dims, 2026-12-07).
template <typename T>
T int_field(const nlohmann::json& v, std::string_view what) {
  if (!v.is_number_integer()) throw InputError(fmt::format("variant: {} is not an integer", what));
  using L = std::numeric_limits<T>;
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(L::max())
                                           : v.get<int64_t>() >= int64_t(L::min()) &&
                                                 (v.get<int64_t>() < 0 || uint64_t(v.get<int64_t>()) <= uint64_t(L::max()));
  if (!fits) throw InputError(fmt::format("variant: {} {} is out of range", what, v.dump()));
  return v.is_number_unsigned() ? T(v.get<uint64_t>()) : T(v.get<int64_t>());
}
template <typename T, size_t N>
std::array<T, N> int_array(const nlohmann::json& v, std::string_view what) {
  if (!v.is_array() || v.size() != N) throw InputError(fmt::format("variant: {} is not an array of {}", what, N));
  std::array<T, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = int_field<T>(v.at(i), what);
  return out;
}

std::string layout_str(spec::Layout l) { return std::string(spec::layout_name(l)); }

spec::Layout conv_layout_from(const std::string& s) {
  if (s == "nchw") return spec::Layout::nchw;
  if (s == "nhwc") return spec::Layout::nhwc;
  throw InputError(fmt::format("variant: layout must be nchw or nhwc, not '{}'", s));
}

spec::MainKind main_from(const std::string& s) {
  for (spec::MainKind k : {spec::MainKind::conv2d, spec::MainKind::conv3d, spec::MainKind::conv_transpose2d,
                           spec::MainKind::conv_transpose3d, spec::MainKind::linear, spec::MainKind::matmul})
    if (spec::detail::main_name(k) == s) return k;
  throw InputError(fmt::format("variant: unknown main operator '{}'", s));
}

nlohmann::json buffer_to_json(const Buffer& b) {
  nlohmann::json dims = nlohmann::json::array();
  for (const auto& [n, v] : b.dims) dims.push_back({n, v});
  nlohmann::json j{{"name", b.name}, {"kind", buffer_kind_name(b.kind)}, {"layout", tensor_layout_name(b.layout)},
                   {"dims", dims}, {"what", b.what}};
  if (b.index >= 0) j["index"] = b.index;  // only v2 buffers: older records stay byte for byte
  return j;
}

constexpr char kHex[] = "0123456789abcdef";

// A kernel argument: a buffer by name (every chain-form kernel's, as always), null, or
// {"type": ..., "bytes": hex} for a struct passed by value.
nlohmann::json arg_to_json(const Variant& v, const KernelArg& a) {
  if (const auto r = arg_buffer(a)) return v.buffer(*r).name;
  if (std::holds_alternative<NullArg>(a)) return nullptr;
  const ValueArg& val = std::get<ValueArg>(a);
  std::string hex;
  hex.reserve(2 * val.bytes.size());
  for (uint8_t byte : val.bytes) {
    hex.push_back(kHex[byte >> 4]);
    hex.push_back(kHex[byte & 15]);
  }
  return {{"type", val.type}, {"bytes", hex}};
}

ValueArg value_arg_from(const Variant& v, const nlohmann::json& j) {
  ValueArg a;
  a.type = j.at("type").get<std::string>();
  const std::string hex = j.at("bytes").get<std::string>();
  const auto nibble = [&](char c) -> uint8_t {
    if (c >= '0' && c <= '9') return uint8_t(c - '0');
    if (c >= 'a' && c <= 'f') return uint8_t(c - 'a' + 10);
    throw InputError(fmt::format("variant {}: a by-value argument's bytes are not lower-case hex", v.name));
  };
  if (hex.size() % 2 != 0) throw InputError(fmt::format("variant {}: a by-value argument has an odd hex length", v.name));
  for (size_t i = 0; i < hex.size(); i += 2) a.bytes.push_back(uint8_t(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return a;
}

Buffer buffer_from_json(const nlohmann::json& j) {
  Buffer b;
  b.name = j.at("name").get<std::string>();
  const auto kind = buffer_kind_from_name(j.at("kind").get<std::string>());
  if (!kind) throw InputError(fmt::format("variant: buffer '{}' has an unknown kind", b.name));
  b.kind = *kind;
  const auto layout = tensor_layout_from_name(j.at("layout").get<std::string>());
  if (!layout) throw InputError(fmt::format("variant: buffer '{}' has an unknown layout", b.name));
  b.layout = *layout;
  for (const auto& d : j.at("dims")) b.dims.emplace_back(d.at(0).get<std::string>(), int_field<int64_t>(d.at(1), "a dim"));
  b.what = j.value("what", "");
  b.index = j.contains("index") ? int_field<int>(j.at("index"), "a buffer's index") : -1;
  return b;
}

nlohmann::json step_to_json(const Variant& v, const Step& s) {
  nlohmann::json j;
  const auto name = [&](BufferRef r) { return v.buffer(r).name; };
  switch (s.kind()) {
    case StepKind::cudnn_conv: {
      const ConvStep& c = s.conv();
      j["kind"] = "cudnn_conv";
      j["layout"] = layout_str(c.layout);
      j["in"] = name(c.in);
      j["filters"] = name(c.filters);
      j["out"] = name(c.out);
      j["bias"] = c.bias ? nlohmann::json(name(*c.bias)) : nlohmann::json(nullptr);
      break;
    }
    case StepKind::cudnn_graph: {
      const GraphStep& g = s.graph();
      j["kind"] = "cudnn_graph";
      j["in_layout"] = layout_str(g.in_layout);
      j["in"] = name(g.in);
      j["filters"] = name(g.filters);
      j["out"] = name(g.out);
      j["chan"] = g.chan ? nlohmann::json(name(*g.chan)) : nlohmann::json(nullptr);
      j["epilogue"] = g.epilogue;
      break;
    }
    case StepKind::kernel: {
      const KernelStep& k = s.kernel();
      j["kind"] = "kernel";
      j["kernel"] = k.name;
      j["grid"] = k.launch.grid;
      j["block"] = k.launch.block;
      j["smem"] = k.launch.smem_bytes;
      nlohmann::json args = nlohmann::json::array();
      for (const KernelArg& a : k.args) args.push_back(arg_to_json(v, a));
      j["args"] = args;
      j["writes"] = k.writes;
      break;
    }
    case StepKind::gemm: {
      const GemmStep& g = s.gemm();
      j["kind"] = "gemm";
      j["linear"] = g.linear;
      j["batch"] = g.gemm.batch;
      j["m"] = g.gemm.m;
      j["k"] = g.gemm.k;
      j["n"] = g.gemm.n;
      j["trans_a"] = g.gemm.trans_a;
      j["trans_b"] = g.gemm.trans_b;
      j["has_bias"] = g.gemm.bias;
      j["a"] = name(g.a);
      j["b"] = name(g.b);
      j["out"] = name(g.out);
      j["bias"] = g.bias ? nlohmann::json(name(*g.bias)) : nlohmann::json(nullptr);
      // Written only where they differ from what plans before cublaslt-fused meant, so the
      // stored plans of every other GEMM variant stay byte-identical.
      if (g.activation != GemmActivation::none) j["activation"] = gemm_activation_name(g.activation);
      if (g.algo != 0) j["algo"] = g.algo;
      break;
    }
    case StepKind::conv_nd: {
      const ConvNdStep& c = s.conv_nd();
      j["kind"] = "conv_nd";
      j["main"] = spec::detail::main_name(c.main);
      j["layout"] = layout_str(c.layout);
      j["in"] = name(c.in);
      j["filters"] = name(c.filters);
      j["out"] = name(c.out);
      j["bias"] = c.bias ? nlohmann::json(name(*c.bias)) : nlohmann::json(nullptr);
      break;
    }
  }
  j["timed"] = s.timed;
  return j;
}

Step step_from_json(const Variant& v, const nlohmann::json& j) {
  const auto ref = [&](const nlohmann::json& n) {
    const std::string s = n.get<std::string>();
    const auto r = v.find_buffer(s);
    if (!r) throw InputError(fmt::format("variant {}: a plan step names buffer '{}', which its table lacks", v.name, s));
    return *r;
  };
  const std::string kind = j.at("kind").get<std::string>();
  const bool timed = j.at("timed").get<bool>();
  if (kind == "cudnn_conv") {
    ConvStep c;
    c.layout = conv_layout_from(j.at("layout").get<std::string>());
    c.in = ref(j.at("in"));
    c.filters = ref(j.at("filters"));
    c.out = ref(j.at("out"));
    if (!j.at("bias").is_null()) c.bias = ref(j.at("bias"));
    return Step{c, timed};
  }
  if (kind == "cudnn_graph") {
    GraphStep g;
    g.in_layout = conv_layout_from(j.at("in_layout").get<std::string>());
    g.in = ref(j.at("in"));
    g.filters = ref(j.at("filters"));
    g.out = ref(j.at("out"));
    if (!j.at("chan").is_null()) g.chan = ref(j.at("chan"));
    g.epilogue = j.at("epilogue").get<bool>();
    return Step{g, timed};
  }
  if (kind == "kernel") {
    KernelStep k;
    k.name = j.at("kernel").get<std::string>();
    k.launch.grid = int_array<uint32_t, 3>(j.at("grid"), "a grid");
    k.launch.block = int_array<uint32_t, 3>(j.at("block"), "a block");
    k.launch.smem_bytes = int_field<uint32_t>(j.at("smem"), "smem");
    for (const auto& a : j.at("args")) {
      if (a.is_string()) k.args.emplace_back(ref(a));
      else if (a.is_null()) k.args.emplace_back(NullArg{});
      else k.args.emplace_back(value_arg_from(v, a));
    }
    for (const auto& w : j.at("writes")) k.writes.push_back(int_field<size_t>(w, "a written argument"));
    return Step{k, timed};
  }
  if (kind == "gemm") {
    GemmStep g;
    g.linear = j.at("linear").get<bool>();
    g.gemm.batch = int_field<int64_t>(j.at("batch"), "batch");
    g.gemm.m = int_field<int64_t>(j.at("m"), "m");
    g.gemm.k = int_field<int64_t>(j.at("k"), "k");
    g.gemm.n = int_field<int64_t>(j.at("n"), "n");
    g.gemm.trans_a = j.at("trans_a").get<bool>();
    g.gemm.trans_b = j.at("trans_b").get<bool>();
    g.gemm.bias = j.at("has_bias").get<bool>();
    g.a = ref(j.at("a"));
    g.b = ref(j.at("b"));
    g.out = ref(j.at("out"));
    if (!j.at("bias").is_null()) g.bias = ref(j.at("bias"));
    if (j.contains("activation")) {
      const std::string text = j.at("activation").get<std::string>();
      const std::optional<GemmActivation> a = parse_gemm_activation(text);
      if (!a) throw InputError(fmt::format("variant: a GEMM step's activation '{}' is not none, relu or gelu_tanh", text::excerpt(text, 40)));
      g.activation = *a;
    }
    if (j.contains("algo")) g.algo = int_field<int>(j.at("algo"), "algo");
    return Step{g, timed};
  }
  if (kind == "conv_nd") {
    ConvNdStep c;
    c.main = main_from(j.at("main").get<std::string>());
    c.layout = conv_layout_from(j.at("layout").get<std::string>());
    c.in = ref(j.at("in"));
    c.filters = ref(j.at("filters"));
    c.out = ref(j.at("out"));
    if (!j.at("bias").is_null()) c.bias = ref(j.at("bias"));
    return Step{c, timed};
  }
  throw InputError(fmt::format("variant {}: unknown step kind '{}'", v.name, kind));
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
  j["format"] = kVariantFormat;
  j["candidate"] = candidate_name(v.candidate);
  j["design"] = v.design;
  j["name"] = v.name;
  j["params"] = params_to_json(v);
  j["source"] = v.source;
  j["buffers"] = nlohmann::json::array();
  for (const auto& b : v.buffers) j["buffers"].push_back(buffer_to_json(b));
  j["plan"] = nlohmann::json::array();
  for (const auto& s : v.plan) j["plan"].push_back(step_to_json(v, s));
  j["output"] = v.buffers.empty() ? std::string() : v.output_buffer().name;
  j["output_layout"] = layout_str(v.output_layout);
  j["kernel_bytes"] = v.kernel_bytes;
  // Written only when set: every other variant's JSON stays byte for byte what it was, and
  // stored records are compared with regenerated ones by their JSON (trust/provenance.cpp).
  if (v.arch_specific) j["arch_specific"] = true;
  return j;
}

Variant variant_from_json(const nlohmann::json& j) {
  try {
    // Format 1 (fusetune before 2026-12) named buffers by convention, with no table: its
    // plans cannot be run or exported by this version. Such records stay in the database.
    const int format = !j.is_object() ? 0 : j.contains("format") ? int_field<int>(j.at("format"), "format") : 1;
    if (format != kVariantFormat)
      throw InputError(fmt::format("variant format {} was written by another fusetune version (this one reads {}); "
                                   "re-tune the problem",
                                   format, kVariantFormat));
    Variant v;
    const auto candidate = candidate_from_name(j.at("candidate").get<std::string>());
    if (!candidate) throw InputError("variant: unknown candidate '" + j.at("candidate").get<std::string>() + "'");
    v.candidate = *candidate;
    v.design = j.at("design").get<std::string>();
    v.name = j.at("name").get<std::string>();
    for (const auto& p : j.at("params"))
      v.params.emplace_back(p.at(0).get<std::string>(), int_field<int64_t>(p.at(1), "a parameter"));
    v.source = j.at("source").get<std::string>();
    for (const auto& b : j.at("buffers")) v.buffers.push_back(buffer_from_json(b));
    for (const auto& s : j.at("plan")) v.plan.push_back(step_from_json(v, s));
    const std::string out = j.at("output").get<std::string>();
    const auto r = v.find_buffer(out);
    if (!r) throw InputError(fmt::format("variant {}: output buffer '{}' is not in its table", v.name, out));
    v.output = *r;
    v.output_layout = conv_layout_from(j.at("output_layout").get<std::string>());
    v.kernel_bytes = j.at("kernel_bytes").get<double>();
    if (j.contains("arch_specific")) v.arch_specific = j.at("arch_specific").get<bool>();
    return v;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("not a fusetune variant: {}", e.what()));
  }
}

}  // namespace fusetune::codegen
