// export --format torch-patch (GPU-free): the spec file's blocks as `fusetune from-torch` writes
// them (a spec line, then its `#@block {JSON}` record) become one module with one op per distinct
// problem and the blocks' records, which is valid Python; what the records hold (from anyone's
// spec file) reaches the module only inside string literals; a file without a record per spec,
// or with a record that is not what from-torch writes, is refused with one line naming the line.
// The module's patch() runs on the GPU machine against real models (bench/patch_model.py).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"
#include "export/export.hpp"
#include "export/patch_spec.hpp"
#include "export_test_winners.hpp"
#include "python_check.hpp"

namespace fusetune::exporter {
namespace {

namespace fs = std::filesystem;
using testing::pick;
using testing::variants_of;
using testing::winner_for;

constexpr const char* kBn = R"({"conv":"conv1","nodes":["conv1","bn1","relu"],"output":"relu","params":[{"kind":"bn_scale","path":"bn1"},{"kind":"bn_shift","path":"bn1"}]})";
constexpr const char* kScale = R"({"conv":"conv2","nodes":["conv2","mul","gelu"],"output":"gelu","params":[{"kind":"tensor","path":"scale2"}]})";
constexpr const char* kSpec1 = "conv2d(n=2,c=8,h=16,w=16,k=16,r=3,pad=1) | mul(param[k]) | add(param[k]) | relu";
constexpr const char* kSpec2 = "conv2d(n=2,c=16,h=16,w=16,k=16,r=3,pad=1,bias=false) | mul(param[k]) | gelu";

std::string spec_file(const std::string& rec1 = kBn, const std::string& rec2 = kScale) {
  return std::string("# fusetune from-torch model.py:Net --input-shape 2,8,16,16\n") + kSpec1 + "  # conv1 + bn1\n#@block " +
         rec1 + "\n" + kSpec2 + "  # conv2\n#@block " + rec2 + "\n" + kSpec1 + "  # conv3 (same problem)\n#@block " +
         R"({"conv":"conv3","nodes":["conv3","bn3","relu_1"],"output":"relu_1","params":[{"kind":"bn_scale","path":"bn3"},{"kind":"bn_shift","path":"bn3"}]})" +
         "\n";
}

// Winners for the blocks, with stand-in CUBIN bytes (the module only embeds them).
std::vector<PatchBlock> blocks_of(const std::string& text) {
  std::vector<PatchBlock> out;
  for (const auto& s : read_patch_spec(text, "specs.txt")) {
    db::WinnerRecord w = winner_for(s.listed.problem, pick(variants_of(s.listed.problem), "epilogue.nchw"), false);
    w.cubin = std::string("\x7f" "ELF\0\"\"\"", 7);
    out.push_back({s.listed.line, s.listed.problem, w, s.block_json});
  }
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

using fusetune::testing::have_python;

// Runs python3 on `script` with the module's path; its exit status and output.
std::pair<int, std::string> run_python(const std::string& script, const std::string& module) {
  const fs::path dir = fs::temp_directory_path() / ("fusetune_patch_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "m.py") << module;
  std::ofstream(dir / "s.py") << script;
  const std::string cmd = "python3 \"" + (dir / "s.py").string() + "\" \"" + (dir / "m.py").string() + "\" > \"" +
                          (dir / "log").string() + "\" 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(dir / "log");
  std::string out(std::istreambuf_iterator<char>(in), {});
  fs::remove_all(dir);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The module's BLOCKS, read without running it: every block is dict(spec=<str>, line=<int>,
// op=OPS[<int>], **json.loads(<str>)), and the records parse to what patch() reads.
constexpr const char* kBlocks = R"PY(
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
ops = blocks = None
for node in tree.body:
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        if node.targets[0].id == "OPS":
            ops = node.value
        if node.targets[0].id == "BLOCKS":
            blocks = node.value
print("ops", len(ops.elts))
for b in blocks.elts:
    assert isinstance(b, ast.Call) and b.func.id == "dict", ast.dump(b)
    kw = {k.arg: k.value for k in b.keywords}
    assert isinstance(kw["spec"], ast.Constant) and isinstance(kw["line"], ast.Constant)
    op = kw["op"]
    assert isinstance(op, ast.Subscript) and op.value.id == "OPS", ast.dump(op)
    rest = kw[None]
    assert isinstance(rest, ast.Call) and rest.func.attr == "loads" and isinstance(rest.args[0], ast.Constant)
    rec = json.loads(rest.args[0].value)
    print("block", kw["line"].value, op.slice.value, rec["conv"], rec["output"], json.dumps(rec["nodes"]),
          len(rec["params"]))
)PY";

TEST(ExportTorchPatch, OneOpPerProblemAndEveryBlockWithItsRecord) {
  const std::string m = export_torch_patch(blocks_of(spec_file()), "specs.txt");
  EXPECT_EQ(count(m, "    _Op(\n"), 2u);  // the first and third blocks share their problem
  EXPECT_NE(m.find("def patch(model):"), std::string::npos);
  EXPECT_NE(m.find("def unpatch(model):"), std::string::npos);
  EXPECT_NE(m.find("class _Op:"), std::string::npos);
  EXPECT_EQ(m.find("cupy"), std::string::npos);
  EXPECT_EQ(m.find("nvrtc"), std::string::npos);
  EXPECT_NE(m.find("# op 0 (line 2 of the spec file):"), std::string::npos);
  EXPECT_NE(m.find("# op 1 (line 4 of the spec file):"), std::string::npos);
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const auto [code, out] = run_python(kBlocks, m);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("ops 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("block 2 0 conv1 relu [\"conv1\", \"bn1\", \"relu\"] 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("block 4 1 conv2 gelu [\"conv2\", \"mul\", \"gelu\"] 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("block 6 0 conv3 relu_1 [\"conv3\", \"bn3\", \"relu_1\"] 2\n"), std::string::npos) << out;
}

TEST(ExportTorchPatch, RecordTextStaysInsideLiterals) {
  // Names a hostile spec file could put in a record: quotes, newlines, code.
  const std::string evil =
      R"({"conv":"conv2\"\"\"\nimport os; os.system('EVIL')\n","nodes":["conv2","x\"\"\")\nEVIL()\n#"],)"
      R"("output":"gelu\r\nEVIL = 1","params":[{"kind":"tensor","path":"scale2'''\nEVIL"}],"extra":"EVIL"})";
  const std::string m = export_torch_patch(blocks_of(spec_file(kBn, evil)), "specs.txt");
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const auto [code, out] = run_python(kBlocks, m);
  ASSERT_EQ(code, 0) << out;
  // Only the fields patch() reads are kept; the rest of the record is dropped.
  EXPECT_NE(out.find("block 4 1 conv2\"\"\"\nimport os; os.system('EVIL')\n gelu\r\nEVIL = 1"), std::string::npos)
      << out;
  EXPECT_EQ(m.find("\"extra\""), std::string::npos);
}

void expect_refused(const std::string& text, const std::string& what) {
  try {
    (void)export_torch_patch(blocks_of(text), "specs.txt");
    FAIL() << "accepted: " << what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(ExportTorchPatch, SpecFilesNotAsFromTorchWritesThemAreRefused) {
  expect_refused(std::string(kSpec1) + "\n", "specs.txt:1: no #@block record after this spec");
  expect_refused(std::string("#@block ") + kBn + "\n" + kSpec1 + "\n", "specs.txt:1: a #@block record before any spec");
  expect_refused(std::string(kSpec1) + "\n#@block " + kBn + "\n#@block " + kBn + "\n",
                 "specs.txt:3: a second #@block record for the spec of line 1");
  expect_refused(spec_file("{not json"), "specs.txt:2: the #@block record is not JSON");
  expect_refused(spec_file("[1]"), "specs.txt:2: the #@block record is not a JSON object");
  expect_refused(spec_file(R"({"conv":"c","nodes":[],"output":"o","params":[]})"), "\"nodes\" is not a list");
  expect_refused(spec_file(R"({"conv":"c","nodes":["c",7],"output":"o","params":[]})"), "is not a name");
  expect_refused(spec_file(R"({"conv":"c","nodes":["c"],"output":"o","params":[{"kind":"code","path":"p"}]})"),
                 "a #@block param of kind 'code'");
  expect_refused(spec_file(R"({"conv":"c","nodes":["c"],"output":"o","params":[{"kind":"tensor","path":"p"}]})"),
                 "specs.txt:2: the #@block record lists 1 per-channel operand(s), the spec 2");
  expect_refused(spec_file(R"({"conv":"","nodes":["c"],"output":"o","params":[]})"), "\"conv\" is not a name");
}

}  // namespace
}  // namespace fusetune::exporter
