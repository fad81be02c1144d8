// export_torch_patch: the tuned ops of a spec file's blocks, with patch(model) / unpatch(model),
// made from export_templates/torch_patch.py.in with the runtime inlined. Where each block sits in
// the user's model comes from the `#@block {JSON}` line `fusetune from-torch` writes after each
// spec line: it is input like any other (a spec file may come from anyone), so it is checked
// field by field and written back as JSON in a string literal, never as code.
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "export/export.hpp"
#include "export/python_literal.hpp"
#include "export/summary.hpp"
#include "export/template_fill.hpp"
#include "export/torch_op.hpp"
#include "spec/canonical.hpp"

namespace fusetune::exporter {
namespace {

constexpr size_t kMaxName = 400;  // a module path or fx node name; longer is not from-torch's

// A string field of the block record, or InputError naming it.
std::string name_field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_string() || j.at(key).get<std::string>().empty() ||
      j.at(key).get<std::string>().size() > kMaxName)
    throw InputError(fmt::format("{}: the #@block record's \"{}\" is not a name", where, key));
  return j.at(key).get<std::string>();
}

// The block record from-torch wrote, checked against the problem it stands beside, rewritten
// with only the fields patch() reads.
nlohmann::json checked_block(const PatchBlock& b, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(b.block_json);
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: the #@block record is not JSON", where));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}: the #@block record is not a JSON object", where));
  nlohmann::json out;
  out["conv"] = name_field(j, "conv", where);
  out["output"] = name_field(j, "output", where);
  if (!j.contains("nodes") || !j.at("nodes").is_array() || j.at("nodes").empty() || j.at("nodes").size() > 64)
    throw InputError(fmt::format("{}: the #@block record's \"nodes\" is not a list of graph nodes", where));
  out["nodes"] = nlohmann::json::array();
  for (const auto& n : j.at("nodes")) {
    if (!n.is_string() || n.get<std::string>().empty() || n.get<std::string>().size() > kMaxName)
      throw InputError(fmt::format("{}: the #@block record's \"nodes\" holds something that is not a name", where));
    out["nodes"].push_back(n);
  }
  if (!j.contains("params") || !j.at("params").is_array())
    throw InputError(fmt::format("{}: the #@block record has no \"params\" list", where));
  out["params"] = nlohmann::json::array();
  for (const auto& p : j.at("params")) {
    if (!p.is_object()) throw InputError(fmt::format("{}: a #@block param is not an object", where));
    const std::string kind = name_field(p, "kind", where);
    if (kind != "tensor" && kind != "bn_scale" && kind != "bn_shift")
      throw InputError(fmt::format("{}: a #@block param of kind '{}' (known: tensor, bn_scale, bn_shift)", where,
                                   text::excerpt(kind, 40)));
    out["params"].push_back({{"kind", kind}, {"path", name_field(p, "path", where)}});
  }
  if (out["params"].size() != static_cast<size_t>(b.problem.num_params))
    throw InputError(fmt::format("{}: the #@block record lists {} per-channel operand(s), the spec {}", where,
                                 out["params"].size(), b.problem.num_params));
  return out;
}

}  // namespace

std::string export_torch_patch(const std::vector<PatchBlock>& blocks, const std::string& spec_file) {
  if (blocks.empty()) throw InputError(fmt::format("{}: no blocks to patch", spec_file));
  std::map<std::string, size_t> op_of;  // canonical problem -> index into ops
  std::vector<std::string> ops;
  std::vector<std::string> header = {"fusetune export --format torch-patch: " + std::to_string(blocks.size()) +
                                     " block(s) of " + text::printable(spec_file)};
  std::string block_text;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const PatchBlock& b = blocks[i];
    const std::string where = fmt::format("{}:{}", spec_file, b.line);
    const nlohmann::json rec = checked_block(b, where);
    const std::string canonical = spec::canonical(b.problem);
    auto it = op_of.find(canonical);
    if (it == op_of.end()) {
      const TorchOp op = torch_op(b.problem, b.winner);
      it = op_of.emplace(canonical, ops.size()).first;
      ops.push_back("    " + op_constructor(op, 4) + ",");
      header.push_back("");
      header.push_back(fmt::format("op {} (line {} of the spec file):", it->second, b.line));
      for (const auto& line : summary_lines(b.problem, b.winner, op.variant)) header.push_back("  " + line);
    }
    block_text += fmt::format("    dict(spec={}, line={}, op=OPS[{}], **json.loads({})),\n", py_str(canonical), b.line,
                              it->second, py_str(rec.dump()));
  }
  std::string ops_text;
  for (const auto& op : ops) ops_text += op + "\n";
  ops_text.pop_back();
  block_text.pop_back();
  std::string head = comment_block(header, "# ");
  head.pop_back();
  return fill_template(export_template("torch_patch.py.in"),
                       {{"HEADER", head},
                        {"RUNTIME", torch_runtime()},
                        {"OPS", ops_text},
                        {"BLOCKS", block_text}});
}

}  // namespace fusetune::exporter
