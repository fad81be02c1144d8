// Exports of an arch-specific winner (fused-conv: wgmma, built for sm_90a only), GPU-free:
//   - its .cu names the one nvcc flag that builds it (the flag smoke compiles it with), and
//     that flag builds it (when nvcc is on PATH);
//   - its torch module carries the record's CUBIN (base64 in string literals) and loads it
//     through cupy.RawModule(path=...) from a private temporary file it removes, after checking
//     the GPU's compute capability (run here against stand-ins for torch and CuPy); it is valid
//     Python and no database text reaches it outside literals and comments;
//   - a record without a CUBIN cannot be exported as a torch module: one line, exit 4;
//   - an epilogue winner's exports are what they were (no CUBIN, SOURCE compiled through CuPy).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "codegen/compile_target.hpp"
#include "common/error.hpp"
#include "db/base64.hpp"
#include "export/export.hpp"
#include "export/template_fill.hpp"
#include "export_test_winners.hpp"

namespace fusetune::exporter {
namespace {

namespace fs = std::filesystem;
using testing::pick;
using testing::variants_of;
using testing::winner_for;

constexpr const char* kSpec = "conv2d(n=256,c=8,h=128,w=128,k=64,r=3) | relu";

struct Fixture {
  spec::Problem problem;
  codegen::Variant fused;
  db::WinnerRecord fused_winner;  // compiled with NVRTC for sm_90a, as the tuner stores it
  codegen::Variant epilogue;
  db::WinnerRecord epilogue_winner;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture out;
    out.problem = spec::parse(kSpec);
    const auto variants = variants_of(out.problem);
    out.fused = pick(variants, "fused-conv");
    out.fused_winner = winner_for(out.problem, out.fused);
    out.epilogue = pick(variants, "epilogue.nchw");
    out.epilogue_winner = winner_for(out.problem, out.epilogue);
    return out;
  }();
  return f;
}

bool have_python() { return std::system("python3 -c pass > /dev/null 2>&1") == 0; }
bool have_nvcc() { return std::system("nvcc --version > /dev/null 2>&1") == 0; }

// A scratch directory of this process, removed with the object.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("fusetune_export_fused_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  [[nodiscard]] fs::path write(const std::string& name, const std::string& bytes) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

// `cmd` through the shell, its output captured in dir/log.
Result shell(const std::string& cmd, const TempDir& dir) {
  const fs::path log = dir.path / "log";
  const int status = std::system((cmd + " > \"" + log.string() + "\" 2>&1").c_str());
  std::ifstream in(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(std::istreambuf_iterator<char>(in), {})};
}

// Runs `script` (Python) with `args`, quoted.
Result python(const std::string& script, const std::vector<std::string>& args, const TempDir& dir) {
  std::string cmd = "python3 \"" + dir.write("script.py", script).string() + "\"";
  for (const auto& a : args) cmd += " \"" + a + "\"";
  return shell(cmd, dir);
}

// The module's tokens outside string literals and comments, one per line: NAME tokens as
// "NAME <name>", others as "<type> <text>". With --template, placeholders are blanked first
// (what fills them is checked, not vocabulary), as fuzz/fuzz_dump.cpp does.
constexpr const char* kCodeTokens = R"PY(
import io, re, sys, tokenize
text = open(sys.argv[1], encoding="utf-8").read()
if len(sys.argv) > 2 and sys.argv[2] == "--template":
    text = re.sub(r"@[A-Z0-9_]+@", " ", text)
skip = {"STRING", "COMMENT", "NL", "NEWLINE", "INDENT", "DEDENT", "ENDMARKER",
        "FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END"}
for tok in tokenize.generate_tokens(io.StringIO(text).readline):
    kind = tokenize.tok_name[tok.type]
    if kind not in skip:
        print(kind, tok.string)
)PY";

// Imports the exported module with stand-ins for torch and CuPy (the GPU's compute capability
// is argv[3]) and loads its kernels for device 0; exit 3 with the message when it raises
// RuntimeError. Checks that the CUBIN is argv[2]'s bytes, that CuPy got it through a file
// (mode 0600, still there when each kernel loads) that is gone afterwards, and that every
// kernel of the plan was loaded, with its dynamic shared memory opted in where it needs it.
constexpr const char* kLoadKernels = R"PY(
import importlib.util, os, stat, sys, tempfile, types
module_path, expected_path, cc_text, tmp = sys.argv[1:5]
cc = tuple(int(x) for x in cc_text.split("."))
expected = open(expected_path, "rb").read()
tempfile.tempdir = tmp
loads, modules = [], []

torch = types.ModuleType("torch")
nn = types.ModuleType("torch.nn")
functional = types.ModuleType("torch.nn.functional")
class Module:
    pass
nn.Module, nn.functional, torch.nn = Module, functional, nn
torch.cuda = types.SimpleNamespace(get_device_capability=lambda device: cc,
                                   get_device_name=lambda device: "Stand-in GPU")
sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": functional})

class Device:
    def __init__(self, index):
        pass
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False

class Kernel:
    def __init__(self, path, name):
        self.path, self.name, self.smem = path, name, 0
    @property
    def max_dynamic_shared_size_bytes(self):  # CuPy loads the kernel on first use, from the file
        with open(self.path, "rb") as f:
            loads.append((self.name, f.read(), stat.S_IMODE(os.stat(self.path).st_mode)))
        return self.smem
    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value):
        self.smem = value

class RawModule:
    def __init__(self, *, code=None, path=None, options=()):
        assert code is None and path is not None, "expected cupy.RawModule(path=...)"
        modules.append(path)
        self.path = path
    def get_function(self, name):
        return Kernel(self.path, name)

cupy = types.ModuleType("cupy")
cupy.cuda = types.SimpleNamespace(Device=Device)
cupy.RawModule = RawModule
sys.modules["cupy"] = cupy

spec = importlib.util.spec_from_file_location("exported", module_path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
try:
    fns = m._kernels(types.SimpleNamespace(index=0, type="cuda"))
except RuntimeError as e:
    print("RuntimeError:", e)
    print("files left:", os.listdir(tmp), "modules:", len(modules))
    sys.exit(3)
assert m.CUBIN == expected, "CUBIN is not the record's bytes"
assert len(modules) == 1, modules
assert not os.path.exists(modules[0]), "the temporary CUBIN file was left behind"
assert os.listdir(tmp) == [], os.listdir(tmp)
steps = [st for st in m.VARIANT["plan"] if st["kind"] == "kernel"]
assert sorted(fns) == sorted({st["kernel"] for st in steps}), sorted(fns)
assert len(loads) == len(steps), loads
for name, data, mode in loads:
    assert data == expected, name
    assert mode == 0o600, oct(mode)
for st in steps:
    if st["smem"] > 48 * 1024:
        assert fns[st["kernel"]].smem >= st["smem"], st
print("ok", len(loads), "kernel loads")
)PY";

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The lines of the CUBIN literal: the string literals between "CUBIN = base64.b64decode(" and ")".
std::string cubin_base64(const std::string& module) {
  const std::string open = "CUBIN = base64.b64decode(\n";
  const size_t a = module.find(open);
  if (a == std::string::npos) return "";
  std::istringstream in(module.substr(a + open.size()));
  std::string line, out;
  while (std::getline(in, line) && line != ")") {
    if (!line.starts_with("    \"") || !line.ends_with("\"")) return "not a literal line: " + line;
    out += line.substr(5, line.size() - 6);
  }
  return out;
}

TEST(ExportFusedConv, CuNamesTheGencodeFlagThatBuildsIt) {
  const Fixture& f = fixture();
  ASSERT_TRUE(f.fused.arch_specific);
  const std::string text = export_cu(f.problem, f.fused_winner);
  // The flag smoke compiles the export with (src/tune/smoke.cpp), from the record's arch.
  const std::string flag = codegen::nvcc_arch_flag(f.fused, f.fused_winner.env.arch());
  ASSERT_EQ(flag, "-gencode arch=compute_90a,code=sm_90a");
  EXPECT_TRUE(contains(text, "// Use: compile this file with nvcc " + flag + " (exactly that")) << text.substr(0, 3000);
  EXPECT_TRUE(contains(text, "GPUs of compute capability\n// 9.0 only"));
  EXPECT_FALSE(contains(text, "-arch=sm_XX"));
  if (!have_nvcc()) GTEST_SKIP() << "nvcc is not on PATH";
  const TempDir dir("cu");
  const fs::path cu = dir.write("fused.cu", text);
  const Result r = shell("nvcc " + flag + " -c \"" + cu.string() + "\" -o \"" + (dir.path / "fused.o").string() + "\"",
                         dir);
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(ExportFusedConv, TorchEmbedsTheCubinAndChecksTheComputeCapability) {
  const Fixture& f = fixture();
  const std::string m = export_torch(f.problem, f.fused_winner);
  for (const std::string want :
       {"import base64\n", "import os\nimport tempfile\n", "CUBIN_ARCH = \"sm_90a\"\n", "CUBIN_CC = (9, 0)\n",
        "CUBIN = base64.b64decode(\n", "        _check_capability(device)\n", "    if cc != CUBIN_CC:\n",
        "        raise RuntimeError(", "tempfile.mkstemp(", "module = cupy.RawModule(path=path)\n",
        "                    os.remove(path)\n"}) {
    EXPECT_TRUE(contains(m, want)) << want;
  }
  // Not the source way: CuPy would compile SOURCE for sm_90, where wgmma does not exist.
  EXPECT_FALSE(contains(m, "RawModule(code="));
  EXPECT_FALSE(contains(m, "NVRTC_OPTIONS"));
  // No template markers or placeholders left.
  EXPECT_FALSE(contains(m, "#@"));
  EXPECT_FALSE(std::regex_search(m, std::regex("@[A-Z_0-9]+@")));
  // The literal is the record's CUBIN, base64, in lines of at most 100 characters.
  const std::string b64 = cubin_base64(m);
  ASSERT_FALSE(f.fused_winner.cubin.empty());
  EXPECT_EQ(db::base64_decode(b64), f.fused_winner.cubin) << b64.substr(0, 200);
  // SOURCE is still there, for reading: what the CUBIN was compiled from.
  EXPECT_TRUE(contains(m, "SOURCE = r\"\"\"" + f.fused.source));
}

TEST(ExportFusedConv, TorchModuleIsValidPython) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const Fixture& f = fixture();
  const TempDir dir("pycompile");
  const fs::path py = dir.write("fused_module.py", export_torch(f.problem, f.fused_winner));
  const Result r = shell("python3 -m py_compile \"" + py.string() + "\"", dir);
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST(ExportFusedConv, TorchModuleLoadsTheCubinFromAPrivateFileItRemoves) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const Fixture& f = fixture();
  const TempDir dir("load");
  const fs::path py = dir.write("fused_module.py", export_torch(f.problem, f.fused_winner));
  const fs::path cubin = dir.write("expected.cubin", f.fused_winner.cubin);
  const fs::path tmp = dir.path / "tmp";
  fs::create_directories(tmp);
  const Result ok = python(kLoadKernels, {py.string(), cubin.string(), "9.0", tmp.string()}, dir);
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_TRUE(contains(ok.output, "ok 2 kernel loads")) << ok.output;  // the filter pack and the conv
}

TEST(ExportFusedConv, TorchModuleRefusesAGpuOfAnotherComputeCapability) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const Fixture& f = fixture();
  const TempDir dir("refuse");
  const fs::path py = dir.write("fused_module.py", export_torch(f.problem, f.fused_winner));
  const fs::path cubin = dir.write("expected.cubin", f.fused_winner.cubin);
  const fs::path tmp = dir.path / "tmp";
  fs::create_directories(tmp);
  for (const std::string cc : {"8.0", "10.0", "9.1"}) {
    const Result r = python(kLoadKernels, {py.string(), cubin.string(), cc, tmp.string()}, dir);
    EXPECT_EQ(r.code, 3) << cc << ": " << r.output;
    // Names both: the CUBIN's target and capability, and the GPU's.
    EXPECT_TRUE(contains(r.output, "a CUBIN for sm_90a, which runs on GPUs of compute capability 9.0 only")) << r.output;
    EXPECT_TRUE(contains(r.output, "has compute capability " + cc)) << r.output;
    // Refused before anything was written or loaded.
    EXPECT_TRUE(contains(r.output, "files left: [] modules: 0")) << r.output;
  }
}

TEST(ExportFusedConv, NoDatabaseTextOutsideLiteralsAndComments) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const Fixture& f = fixture();
  // A record whose free text and CUBIN try to break out of where the module puts them.
  db::WinnerRecord w = f.fused_winner;
  w.env.gpu_name = "EVIL GPU\nimport os; os.system('EVIL_GPU')";
  w.cudnn_algo = "EVIL_ALGO\"\"\"\nEVIL_CALL()\n#";
  w.created_at = "2026-11-29T12:00:00Z\nEVIL_TIME = 1";
  w.cubin = "\"\"\"\nimport os\nEVIL_CUBIN = 1  # '\\\n" + std::string("\0\xff\x7f", 3) + "ELF" + f.fused_winner.cubin;
  const TempDir dir("literals");
  const std::string m = export_torch(f.problem, w);
  const fs::path py = dir.write("fused_module.py", m);
  const fs::path tmpl = dir.write("template.py", std::string(export_template("torch_module.py.in")));

  const Result code = python(kCodeTokens, {py.string()}, dir);
  ASSERT_EQ(code.code, 0) << code.output;
  const Result vocab = python(kCodeTokens, {tmpl.string(), "--template"}, dir);
  ASSERT_EQ(vocab.code, 0) << vocab.output;
  // Names in code: the template's own, and what export_torch.cpp writes around the values
  // (nn.Conv2d's keywords, literals), as fuzz/fuzz_dump.cpp's vocabulary.
  std::set<std::string> names = {"dict",    "in_channels", "out_channels", "kernel_size", "stride",
                                 "padding", "dilation",    "bias",         "True",        "False"};
  std::istringstream vin(vocab.output);
  for (std::string line; std::getline(vin, line);)
    if (line.starts_with("NAME ")) names.insert(line.substr(5));
  std::istringstream code_lines(code.output);
  size_t tokens = 0;
  for (std::string line; std::getline(code_lines, line); ++tokens) {
    EXPECT_FALSE(contains(line, "EVIL")) << line;
    EXPECT_FALSE(line.starts_with("ERRORTOKEN")) << line;
    if (line.starts_with("NAME ")) {
      EXPECT_TRUE(names.contains(line.substr(5))) << "a name in code: " << line;
    }
  }
  EXPECT_GT(tokens, 500u);
  // The hostile bytes come back exactly (and the module still imports and loads them).
  const fs::path cubin = dir.write("expected.cubin", w.cubin);
  const fs::path tmp = dir.path / "tmp";
  fs::create_directories(tmp);
  const Result load = python(kLoadKernels, {py.string(), cubin.string(), "9.0", tmp.string()}, dir);
  EXPECT_EQ(load.code, 0) << load.output;
  // Free text only in comments, on one line each.
  EXPECT_TRUE(contains(m, "\n# GPU:       EVIL GPU import os; os.system('EVIL_GPU')")) << m.substr(0, 2000);
}

TEST(ExportFusedConv, TorchWithoutCubinFailsWithOneLine) {
  const Fixture& f = fixture();
  db::WinnerRecord w = f.fused_winner;
  w.cubin.clear();
  try {
    (void)export_torch(f.problem, w);
    FAIL() << "exported a torch module without a CUBIN";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::not_found);
    const std::string what = e.what();
    EXPECT_FALSE(contains(what, "\n"));
    EXPECT_TRUE(contains(what, "the winner " + f.fused.name + " stores no CUBIN, which --format torch needs")) << what;
    EXPECT_TRUE(contains(what, "sm_90a")) << what;
    EXPECT_TRUE(contains(what, "-gencode arch=compute_90a,code=sm_90a")) << what;
  }
  // The .cu needs no CUBIN.
  EXPECT_TRUE(contains(export_cu(f.problem, w), "nvcc -gencode arch=compute_90a,code=sm_90a"));
}

TEST(ExportFusedConv, ARecordWithoutAValidArchitectureIsRefused) {
  const Fixture& f = fixture();
  for (const auto& [major, minor] : {std::pair{0, 0}, {-1, 0}, {9, 10}, {21, 0}}) {
    db::WinnerRecord w = f.fused_winner;
    w.env.cc_major = major;
    w.env.cc_minor = minor;
    EXPECT_THROW((void)export_cu(f.problem, w), InputError) << major << "." << minor;
    EXPECT_THROW((void)export_torch(f.problem, w), InputError) << major << "." << minor;
  }
}

TEST(ExportFusedConv, EpilogueWinnersExportAsBefore) {
  const Fixture& f = fixture();
  ASSERT_FALSE(f.epilogue.arch_specific);
  ASSERT_FALSE(f.epilogue_winner.cubin.empty());  // it has one, and the module does not use it
  const std::string m = export_torch(f.problem, f.epilogue_winner);
  for (const std::string absent : {"CUBIN", "base64", "tempfile", "_check_capability", "#@", "import os"})
    EXPECT_FALSE(contains(m, absent)) << absent;
  EXPECT_TRUE(contains(m, "\"\"\"\nimport contextlib\nimport json\nimport numbers\n\nimport cupy\n"));
  EXPECT_TRUE(contains(m, "NVRTC_OPTIONS = (\"-std=c++17\",)\n# The variant's plan"));
  EXPECT_TRUE(contains(m,
                       "forward() runs the plan (VARIANT below) step by step on torch's current CUDA stream: the cuDNN\n"
                       "convolutions through torch.nn.functional.conv2d, the generated CUDA kernels (SOURCE, compiled "
                       "once\nper device with NVRTC through CuPy) on the tensors' memory. The kernels are specialized to "
                       "the\ntuned shapes: another input shape raises ValueError. Inference only: forward() runs under\n"));
  EXPECT_TRUE(contains(m, R"PY(_kernels_by_device = {}  # CUDA device index -> {kernel name: cupy.RawKernel}


def _kernels(device):
    """The plan's kernels for `device`, compiled from SOURCE on first use."""
    fns = _kernels_by_device.get(device.index)
    if fns is None:
        fns = {}
        steps = [st for st in VARIANT["plan"] if st["kind"] == "kernel"]
        if steps:
            with cupy.cuda.Device(device.index):
                module = cupy.RawModule(code=SOURCE, options=NVRTC_OPTIONS)
                for st in steps:
                    if st["kernel"] not in fns:
                        fns[st["kernel"]] = module.get_function(st["kernel"])
                    fn = fns[st["kernel"]]
                    if st["smem"] > _SMEM_WITHOUT_OPT_IN:
                        fn.max_dynamic_shared_size_bytes = max(fn.max_dynamic_shared_size_bytes, st["smem"])
        _kernels_by_device[device.index] = fns
    return fns


def _same(name, value, expected):
)PY")) << m;
  const std::string cu = export_cu(f.problem, f.epilogue_winner);
  EXPECT_TRUE(contains(cu,
                       "// Use: compile this file with nvcc (-arch=sm_XX for your GPU), allocate the buffers below, and\n"
                       "// call fusetune_run_epilogue() (at the end) with a callback that runs the cuDNN convolution.\n"));
}

}  // namespace
}  // namespace fusetune::exporter
