// Exports of an arch-specific winner (fused-conv: wgmma, built for sm_90a only), GPU-free:
//   - its .cu names the one nvcc flag that builds it (the flag smoke compiles it with), and
//     that flag builds it (when nvcc is on PATH);
//   - its torch module carries the record's CUBIN (base64 in string literals) and loads it from
//     memory through cuda-python's driver bindings into the device's primary context, after
//     checking the GPU's compute capability, importing neither CuPy nor NVRTC (run here against
//     stand-ins for torch and the driver); it registers one custom op with a fake implementation;
//     it is valid Python and no database text reaches it outside literals and comments;
//   - a record without a CUBIN gets one compiled at export, as --format cubin does;
//   - an epilogue winner's module runs its (sm_90) CUBIN the same way.
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
#include "python_check.hpp"

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

using fusetune::testing::have_python;
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

// Imports the exported module with stand-ins for torch and cuda-python's driver bindings (the
// GPU's compute capability is argv[3]) and loads its kernels for device 0; exit 3 with the
// message when it raises RuntimeError. Checks that the driver got argv[2]'s bytes from memory
// (cuModuleLoadData: no file is written), that every kernel of the plan was loaded, with its
// dynamic shared memory opted in where it needs it, inside the device's primary context, and
// that neither CuPy nor NVRTC was imported (an import of either fails here).
constexpr const char* kLoadKernels = R"PY(
import enum, importlib.abc, importlib.util, os, sys, tempfile, types
module_path, expected_path, cc_text, tmp = sys.argv[1:5]
cc = tuple(int(x) for x in cc_text.split("."))
expected = open(expected_path, "rb").read()
tempfile.tempdir = tmp
calls = []

class NoCompiler(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "cupy" or name.startswith("cupy.") or name.endswith("nvrtc"):
            raise ImportError(f"the module imported {name}")
        return None
sys.meta_path.insert(0, NoCompiler())

torch = types.ModuleType("torch")
nn = types.ModuleType("torch.nn")
functional = types.ModuleType("torch.nn.functional")
class Module:
    pass
nn.Module, nn.functional, torch.nn = Module, functional, nn
torch.Tensor = type("Tensor", (), {})
torch.cuda = types.SimpleNamespace(get_device_capability=lambda device: cc,
                                   get_device_name=lambda device: "Stand-in GPU")
class CustomOp:
    def __init__(self, name, fn):
        self.name, self.fn, self.fake = name, fn, None
    def register_fake(self, fn):
        self.fake = fn
    def __call__(self, *args):
        return self.fn(*args)
registered = []
def custom_op(name, fn, mutates_args, device_types=None):
    registered.append((name, mutates_args, device_types))
    return CustomOp(name, fn)
torch.library = types.SimpleNamespace(custom_op=custom_op)
class Ops:  # as torch.ops: any namespace on demand, holding the ops registered in it
    def __getattr__(self, namespace):
        return types.SimpleNamespace()
torch.ops = Ops()
sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": functional})

class CUresult(enum.Enum):
    CUDA_SUCCESS = 0
driver = types.ModuleType("cuda.bindings.driver")
driver.CUresult = CUresult
driver.CUfunction_attribute = types.SimpleNamespace(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="max_dyn_smem")
current = []
def call(name, *result):
    def fn(*args):
        calls.append((name, args, tuple(current)))
        return (CUresult.CUDA_SUCCESS,) + result
    return fn
driver.cuInit = call("cuInit")
driver.cuDeviceGet = call("cuDeviceGet", "dev0")
driver.cuDevicePrimaryCtxRetain = call("cuDevicePrimaryCtxRetain", "primary")
def push(ctx):
    current.append(ctx)
    return (CUresult.CUDA_SUCCESS,)
def pop():
    current.pop()
    return (CUresult.CUDA_SUCCESS, "primary")
driver.cuCtxPushCurrent, driver.cuCtxPopCurrent = push, pop
driver.cuModuleLoadData = call("cuModuleLoadData", "module")
def get_function(module, name):
    calls.append(("cuModuleGetFunction", (module, name), tuple(current)))
    return (CUresult.CUDA_SUCCESS, "fn:" + name.decode())
driver.cuModuleGetFunction = get_function
driver.cuFuncSetAttribute = call("cuFuncSetAttribute")
cuda = types.ModuleType("cuda")
bindings = types.ModuleType("cuda.bindings")
cuda.bindings, bindings.driver = bindings, driver
sys.modules.update({"cuda": cuda, "cuda.bindings": bindings, "cuda.bindings.driver": driver})

spec = importlib.util.spec_from_file_location("exported", module_path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
assert len(registered) == 1 and registered[0][0].startswith("fusetune::op_"), registered
assert registered[0][1:] == ((), "cuda"), registered
assert m.OP.op.fake is not None, "no fake implementation: torch.compile could not trace the op"
try:
    fns, ctx = m.OP.kernels(types.SimpleNamespace(index=0, type="cuda"))
except RuntimeError as e:
    print("RuntimeError:", e)
    print("files left:", os.listdir(tmp), "driver calls:", len(calls))
    sys.exit(3)
assert m.CUBIN == expected, "CUBIN is not the record's bytes"
loads = [c for c in calls if c[0] == "cuModuleLoadData"]
assert len(loads) == 1 and loads[0][1][0] == expected, "the driver did not get the CUBIN's bytes"
assert os.listdir(tmp) == [], os.listdir(tmp)
steps = [st for st in m.VARIANT["plan"] if st["kind"] == "kernel"]
assert sorted(fns) == sorted({st["kernel"] for st in steps}), sorted(fns)
gets = [c for c in calls if c[0] == "cuModuleGetFunction"]
assert sorted(c[1][1].decode() for c in gets) == sorted(fns), gets
for name, args, ctxs in calls:
    if name in ("cuModuleLoadData", "cuModuleGetFunction", "cuFuncSetAttribute"):
        assert ctxs == ("primary",), (name, ctxs)
assert current == [], "a context was left pushed"
for st in steps:
    if st["smem"] > 48 * 1024:
        assert ("cuFuncSetAttribute", ("fn:" + st["kernel"], "max_dyn_smem", st["smem"]), ("primary",)) in calls, st
assert not any(k == "cupy" or k.endswith("nvrtc") for k in sys.modules), "a compiler was imported"
print("ok", len(gets), "kernel loads")
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

// Issue 42: a fused-conv winner runs no cuDNN conv, and its fp32 mode is 3xTF32: the header
// says so (it said "TF32 tensor cores in the cuDNN conv", "(cuDNN conv included)", and called
// 3xTF32 "strict IEEE fp32 products"). An epilogue winner's header keeps the cuDNN conv.
TEST(ExportFusedConv, HeaderSaysNoCudnnConvRuns) {
  const Fixture& f = fixture();
  const std::string text = export_cu(f.problem, f.fused_winner);
  const std::string header = text.substr(0, text.find("// Use:"));
  EXPECT_FALSE(contains(header, "cuDNN conv included")) << header;
  EXPECT_FALSE(contains(header, "in the cuDNN conv")) << header;
  EXPECT_FALSE(contains(header, "IEEE")) << header;
  EXPECT_TRUE(contains(header, "the conv is in it: no cuDNN runs")) << header;
  EXPECT_TRUE(contains(header, "in the fused conv kernel")) << header;
  const std::string epi = export_cu(f.problem, f.epilogue_winner);
  EXPECT_TRUE(contains(epi.substr(0, epi.find("// Use:")), "cuDNN conv included"));
}

TEST(ExportFusedConv, TorchEmbedsTheCubinAndChecksTheComputeCapability) {
  const Fixture& f = fixture();
  const std::string m = export_torch(f.problem, f.fused_winner);
  for (const std::string want :
       {"import base64\n", "CUBIN_ARCH = \"sm_90a\"\n", "CUBIN_CC = (9, 0)\n", "CUBIN = base64.b64decode(\n",
        "        self.check_capability(device)\n", "        if cc != self.cubin_cc:\n", "            raise RuntimeError(",
        "cu.cuModuleLoadData(self.cubin)", "torch.library.custom_op(op.name, run, mutates_args=(), device_types=\"cuda\")",
        "custom.register_fake(fake)"}) {
    EXPECT_TRUE(contains(m, want)) << want;
  }
  // Nothing compiles at import or at the first call: no CuPy, no NVRTC, no temporary file.
  for (const std::string absent : {"cupy", "nvrtc", "NVRTC_OPTIONS", "tempfile", "RawModule"})
    EXPECT_FALSE(contains(m, absent)) << absent;
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

TEST(ExportFusedConv, TorchModuleLoadsTheCubinThroughTheDriverWithoutACompiler) {
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
    EXPECT_TRUE(contains(r.output, "files left: [] driver calls: 0")) << r.output;
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
  const fs::path tmpl = dir.write("template.py", std::string(export_template("torch_module.py.in")) + "\n" +
                                                     std::string(export_template("torch_runtime.py.in")));

  const Result code = python(kCodeTokens, {py.string()}, dir);
  ASSERT_EQ(code.code, 0) << code.output;
  const Result vocab = python(kCodeTokens, {tmpl.string(), "--template"}, dir);
  ASSERT_EQ(vocab.code, 0) << vocab.output;
  // Names in code: the template's own, and what export_torch.cpp writes around the values
  // (nn.Conv2d's keywords, literals), as fuzz/fuzz_dump.cpp's vocabulary.
  std::set<std::string> names = {"dict",     "in_channels", "out_channels", "kernel_size", "stride", "padding",
                                 "dilation", "bias",        "True",         "False",       "Model",  "ModelNew"};
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

// A record without its CUBIN (a trimmed dump, an older database) gets the source compiled again
// with NVRTC for the record's target, as `--format cubin` does: the module still carries a CUBIN.
TEST(ExportFusedConv, TorchWithoutAStoredCubinCompilesOneAtExport) {
  const Fixture& f = fixture();
  db::WinnerRecord w = f.fused_winner;
  w.cubin.clear();
  const std::string m = export_torch(f.problem, w);
  const auto cubin = db::base64_decode(cubin_base64(m));
  ASSERT_TRUE(cubin.has_value());
  EXPECT_EQ(cubin->substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(*cubin, export_cubin(f.problem, w));
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

// An epilogue winner (no wgmma) runs the same way: its CUBIN for the plain target (sm_90), through
// the driver; its .cu is what it was.
TEST(ExportFusedConv, EpilogueWinnersRunTheirCubinToo) {
  const Fixture& f = fixture();
  ASSERT_FALSE(f.epilogue.arch_specific);
  ASSERT_FALSE(f.epilogue_winner.cubin.empty());
  const std::string m = export_torch(f.problem, f.epilogue_winner);
  EXPECT_TRUE(contains(m, "CUBIN_ARCH = \"sm_90\"\n"));
  EXPECT_EQ(db::base64_decode(cubin_base64(m)), f.epilogue_winner.cubin);
  for (const std::string absent : {"cupy", "nvrtc", "NVRTC_OPTIONS", "tempfile", "#@"})
    EXPECT_FALSE(contains(m, absent)) << absent;
  if (have_python()) {
    const TempDir dir("epilogue");
    const fs::path py = dir.write("epilogue_module.py", m);
    const fs::path cubin = dir.write("expected.cubin", f.epilogue_winner.cubin);
    const fs::path tmp = dir.path / "tmp";
    fs::create_directories(tmp);
    const Result ok = python(kLoadKernels, {py.string(), cubin.string(), "9.0", tmp.string()}, dir);
    EXPECT_EQ(ok.code, 0) << ok.output;
  }
  const std::string cu = export_cu(f.problem, f.epilogue_winner);
  EXPECT_TRUE(contains(cu,
                       "// Use: compile this file with nvcc (-arch=sm_XX for your GPU), allocate the buffers below, and\n"
                       "// call fusetune_run_epilogue() (at the end) with a callback that runs the cuDNN convolution.\n"));
}

}  // namespace
}  // namespace fusetune::exporter
