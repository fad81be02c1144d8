// export_torch (GPU-free): the module keeps the KernelBench constructors for the presets and a
// generic one otherwise, is valid Python (checked with python3's parser when there is one),
// embeds the plan and the source exactly, and imports nothing of fusetune's. Also the template
// filler and the Python literals it is built from. bench/check_torch_export.py runs the module
// against the reference models on a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "codegen/cudnn_engine.hpp"
#include "common/error.hpp"
#include "export/export.hpp"
#include "export/python_literal.hpp"
#include "export/template_fill.hpp"
#include "export_test_winners.hpp"
#include "python_check.hpp"

namespace fusetune::exporter {
namespace {

namespace fs = std::filesystem;
using fusetune::testing::have_python;
using testing::pick;
using fusetune::testing::python_parse_error;
using testing::preset;
using testing::variants_of;
using testing::winner_for;

std::string module_for(const spec::Problem& p, const std::string& prefix, const std::string& math = "tf32") {
  return export_torch(p, winner_for(p, pick(variants_of(p), prefix), false, math));
}

// The text between `open` and the next `close` after it.
std::string between(const std::string& text, const std::string& open, const std::string& close) {
  const size_t a = text.find(open);
  if (a == std::string::npos) return "";
  const size_t b = text.find(close, a + open.size());
  return b == std::string::npos ? "" : text.substr(a + open.size(), b - a - open.size());
}


TEST(ExportTorch, PresetsKeepTheKernelBenchConstructors) {
  const std::string m31 = module_for(preset("kernelbench-31"), "epilogue.nhwc");
  EXPECT_NE(m31.find("    def __init__(self, in_channels, out_channels, kernel_size, constant_value, bias_shape, "
                     "scaling_factor):\n"),
            std::string::npos);
  for (const std::string want :
       {"(\"in_channels\", 64),", "(\"out_channels\", 128),", "(\"kernel_size\", 3),", "(\"constant_value\", 0.5),",
        "(\"bias_shape\", (128, 1, 1)),", "(\"scaling_factor\", 2.0),", "PARAM_NAMES = [\"bias\"]",
        "PRESET = \"kernelbench-31\""}) {
    EXPECT_NE(m31.find(want), std::string::npos) << want;
  }
  const std::string m32 = module_for(preset("kernelbench-32"), "epilogue.nchw");
  EXPECT_NE(m32.find("    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):\n"),
            std::string::npos);
  EXPECT_NE(m32.find("(\"scale_factor\", 2.0),"), std::string::npos);
  EXPECT_NE(m32.find("PARAM_NAMES = []"), std::string::npos);
  EXPECT_NE(m32.find("OUTPUT_SHAPE = (64, 1, 254, 254)"), std::string::npos);
}

TEST(ExportTorch, AHandTypedSpecEqualToAPresetGetsItsConstructor) {
  const spec::Problem p = spec::parse("conv2d(n=64,c=64,h=256,w=256,k=128,r=3,s=3,pad=0) | mul(2) | reduce_min");
  EXPECT_NE(
      module_for(p, "epilogue.nchw").find("def __init__(self, in_channels, out_channels, kernel_size, scale_factor):"),
      std::string::npos);
}

TEST(ExportTorch, OtherProblemsGetTheGenericConstructor) {
  const spec::Problem p = spec::parse(
      "conv2d(n=2,c=3,h=17,w=13,k=8,r=3,s=2,stride=2,pad=1x0,in=nhwc,out=any) | add(param[k]) | "
      "mul(param[k]) | gelu");
  const std::string m = module_for(p, "epilogue.nhwc");
  EXPECT_NE(m.find("    def __init__(self):\n"), std::string::npos);
  EXPECT_NE(m.find("INIT_ARGS = []"), std::string::npos);
  EXPECT_NE(m.find("PARAM_NAMES = [\"param0\", \"param1\"]"), std::string::npos);
  EXPECT_NE(m.find("PRESET = \"\""), std::string::npos);
  EXPECT_NE(m.find("INPUT_LAYOUT = \"nhwc\""), std::string::npos);
  EXPECT_NE(m.find("in_channels=3, out_channels=8, kernel_size=(3, 2),\n    stride=(2, 2), padding=(1, 0), "
                   "dilation=(1, 1), bias=True)"),
            std::string::npos)
      << m;
  // KernelBench builds ModelNew(*get_init_inputs()) whatever the problem: the generic ModelNew
  // takes the reference's arguments (and uses none: the spec fixes shapes and constants).
  const auto w = winner_for(p, pick(variants_of(p), "epilogue.nhwc"), true);
  const std::string kb = export_torch(p, w, TorchFlavor::kernelbench);
  EXPECT_NE(kb.find("    def __init__(self, *init_inputs):\n"), std::string::npos);
  if (have_python()) {
    EXPECT_EQ(python_parse_error(kb), "");
  }
}

TEST(ExportTorch, ModulesAreValidPython) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  std::vector<spec::Problem> problems = {preset("kernelbench-31"), preset("kernelbench-32"),
                                         spec::parse("conv2d(n=1,c=5,h=9,w=7,k=3,r=3,bias=false,out=nhwc) | relu"),
                                         spec::parse("conv2d(n=3,c=4,h=8,w=8,k=6,r=1,in=nhwc) | sub(1.5, x) | "
                                                     "reduce_mean | sigmoid")};
  for (const auto& p : problems) {
    // The first variant of each (candidate, design) pair.
    std::map<std::string, codegen::Variant> firsts;  // "epilogue.nchw", "unfused.nhwc", ...
    for (const auto& v : variants_of(p)) firsts.emplace(v.name.substr(0, v.name.find('.', v.name.find('.') + 1)), v);
    for (const auto& [design, v] : firsts) {
      if (v.candidate == codegen::Candidate::cudnn_fused) continue;  // refused: see below
      for (const std::string math : {"tf32", "fp32"}) {
        db::WinnerRecord w = winner_for(p, v, false, math);
        // Every module embeds the record's CUBIN: any bytes do for parsing (and spare NVRTC).
        if (!v.source.empty()) w.cubin = std::string("\x7f" "ELF\0\"\"\"\\", 9);
        const std::string text = export_torch(p, w);
        EXPECT_EQ(python_parse_error(text), "") << spec::canonical(p) << " " << v.name << " " << math;
      }
    }
  }
}

// A winner that runs cuDNN's fused graph has no kernel of ours for the module to launch: the
// export says so and names the format that works (exit code 4, like any missing export).
TEST(ExportTorch, CudnnFusedWinnersAreRefusedWithTheFormatThatWorks) {
  const spec::Problem p = preset("kernelbench-32");
  const codegen::Variant v = codegen::with_engine(pick(variants_of(p), "cudnn-fused.x-nhwc"), {7, {{24, 29}}});
  try {
    (void)export_torch(p, winner_for(p, v, false));
    FAIL() << "exported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::not_found);
    EXPECT_NE(std::string(e.what()).find("--format cu"), std::string::npos) << e.what();
  }
}

TEST(ExportTorch, EmbedsThePlanJsonAndTheSourceExactly) {
  for (const std::string name : {"kernelbench-31", "kernelbench-32"}) {
    const spec::Problem p = preset(name);
    for (const std::string prefix : {"epilogue.nchw", "epilogue.nhwc", "unfused"}) {
      const codegen::Variant v = pick(variants_of(p), prefix);
      const std::string m = export_torch(p, winner_for(p, v, false));
      const std::string json_text = between(m, "VARIANT = json.loads(r\"\"\"", "\"\"\")");
      ASSERT_FALSE(json_text.empty()) << name << " " << prefix;
      nlohmann::json j = nlohmann::json::parse(json_text);
      EXPECT_FALSE(j.contains("source"));
      j["source"] = between(m, "SOURCE = r\"\"\"", "\"\"\"");
      EXPECT_EQ(j["source"], v.source) << name << " " << prefix;
      const codegen::Variant back = codegen::variant_from_json(j);
      EXPECT_EQ(codegen::to_json(back).dump(), codegen::to_json(v).dump()) << name << " " << prefix;
    }
  }
}

TEST(ExportTorch, StandsAloneAndLeavesNoPlaceholder) {
  const std::string m = module_for(preset("kernelbench-31"), "epilogue.nhwc");
  EXPECT_FALSE(std::regex_search(m, std::regex("^\\s*(import|from)\\s+fusetune", std::regex::multiline)));
  EXPECT_FALSE(std::regex_search(m, std::regex("@[A-Z_]+@")));
  EXPECT_NE(m.find("class Model(nn.Module):"), std::string::npos);
  EXPECT_NE(m.find("def get_inputs():"), std::string::npos);
  EXPECT_NE(m.find("def get_init_inputs():"), std::string::npos);
  EXPECT_NE(m.find("INPUT_SHAPE = (128, 64, 128, 128)"), std::string::npos);
  // The header: problem, GPU and speedups, as comments above the docstring.
  EXPECT_EQ(m.rfind("# fusetune export of the tuned winner", 0), 0u);
  EXPECT_NE(m.find("# vs unfused: 2.75x"), std::string::npos);
  EXPECT_NE(m.find("# GPU:       NVIDIA H200 (sm_90, 132 SMs)"), std::string::npos);
}

// The math mode reaches the module (which turns TF32 off around an fp32 plan's cuDNN steps) and
// the CUBIN it runs: an fp32 winner's kernels are the ones compiled with --fmad=false.
TEST(ExportTorch, MathModeReachesTheModuleAndItsCubin) {
  const spec::Problem p = preset("kernelbench-31");
  const codegen::Variant v = pick(variants_of(p), "epilogue.nchw");
  const db::WinnerRecord tf32 = winner_for(p, v, true, "tf32");
  const db::WinnerRecord fp32 = winner_for(p, v, true, "fp32");
  const std::string m_tf32 = export_torch(p, tf32);
  const std::string m_fp32 = export_torch(p, fp32);
  EXPECT_NE(m_tf32.find("MATH = \"tf32\""), std::string::npos);
  EXPECT_NE(m_fp32.find("MATH = \"fp32\""), std::string::npos);
  EXPECT_NE(m_fp32.find("torch.backends.cudnn.allow_tf32 = False"), std::string::npos);
  ASSERT_NE(tf32.cubin, fp32.cubin);  // --fmad=false changes the code
  EXPECT_EQ(between(m_fp32, "CUBIN = base64.b64decode(\n", "\n)"),
            between(export_torch(p, [&] { auto w = fp32; w.cubin.clear(); return w; }()), "CUBIN = base64.b64decode(\n",
                    "\n)"))
      << "a record without its CUBIN gets the same one compiled at export";
  EXPECT_NE(between(m_fp32, "CUBIN = base64.b64decode(\n", "\n)"), between(m_tf32, "CUBIN = base64.b64decode(\n", "\n)"));
}

// --format kernelbench: the same module with KernelBench's class name, so its harness (which
// execs the file and builds ModelNew(*get_init_inputs()) from the same seed as Model) loads it.
TEST(ExportTorch, KernelBenchFlavorNamesTheClassModelNew) {
  const spec::Problem p = preset("kernelbench-31");
  const auto w = winner_for(p, pick(variants_of(p), "epilogue.nchw"), true);
  const std::string kb = export_torch(p, w, TorchFlavor::kernelbench);
  EXPECT_NE(kb.find("class ModelNew(nn.Module):"), std::string::npos);
  EXPECT_EQ(kb.find("class Model(nn.Module):"), std::string::npos);
  EXPECT_NE(kb.find("`fusetune export --format kernelbench`"), std::string::npos);
  // KernelBench runs it in the reference file's namespace: it must not define the reference's
  // module-level names (batch_size, in_channels, ...), which the reference's get_inputs() reads.
  for (const std::string name : {"\nbatch_size", "\nin_channels", "\nheight", "\nwidth", "\nkernel_size"})
    EXPECT_EQ(kb.find(name + " ="), std::string::npos) << name;
  if (have_python()) {
    EXPECT_EQ(python_parse_error(kb), "");
  }
}

TEST(ExportTorch, RefusesAWinnerOfAnotherProblem) {
  const spec::Problem p = preset("kernelbench-31");
  const auto w = winner_for(p, pick(variants_of(p), "epilogue.nchw"), false);
  EXPECT_THROW((void)export_torch(preset("kernelbench-32"), w), InputError);
}

TEST(TemplateFill, ReplacesPlaceholdersAndKeepsDecorators) {
  EXPECT_EQ(fill_template("@contextlib.x\nA = @A@ + @B_2@ @ c", {{"A", "1"}, {"B_2", "two"}}),
            "@contextlib.x\nA = 1 + two @ c");
  EXPECT_THROW((void)fill_template("@A@ @MISSING@", {{"A", "1"}}), Error);
  EXPECT_THROW((void)fill_template("@A@", {{"A", "1"}, {"UNUSED", "2"}}), Error);
  EXPECT_NE(export_template("torch_module.py.in").find("class @CLASS@(nn.Module):"), std::string::npos);
  EXPECT_NE(export_template("torch_runtime.py.in").find("class _Op:"), std::string::npos);
}

TEST(PythonLiteral, FloatsTuplesStringsAndLongText) {
  EXPECT_EQ(py_float(2.0), "2.0");
  EXPECT_EQ(py_float(0.5), "0.5");
  EXPECT_EQ(py_float(-1e20), "-1e+20");
  EXPECT_EQ(py_float(0.1), "0.1");
  EXPECT_EQ(py_tuple({128, 1, 1}), "(128, 1, 1)");
  EXPECT_EQ(py_tuple({7}), "(7,)");
  EXPECT_EQ(py_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(py_long_text("x \\\ny\n"), "r\"\"\"x \\\ny\n\"\"\"");
  EXPECT_EQ(py_long_text("ends in \\"), py_str("ends in \\"));
  EXPECT_EQ(py_long_text("has \"\"\" inside"), py_str("has \"\"\" inside"));
}

}  // namespace
}  // namespace fusetune::exporter
