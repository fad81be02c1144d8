// export_model_torch (export/export.hpp): a version-2 winner as a PyTorch module that rebuilds the
// reference model's parameters from the init file. GPU-free: the modules are parsed by python3
// (torch is not needed to parse), the init file is checked as untrusted input (every refusal one
// InputError naming what is wrong), and nothing from it reaches the module outside a literal.
#include <gtest/gtest.h>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "export/export.hpp"
#include "export_test_winners.hpp"
#include "python_check.hpp"
#include "spec/parser.hpp"

namespace fusetune::exporter {
namespace {

using fusetune::testing::have_python;
using testing::pick;
using fusetune::testing::python_parse_error;
using testing::variants_of;
using testing::winner_for;

struct Case {
  const char* spec;
  const char* init;
};

// KernelBench-like models: the main operator's module, then parameters made after (or before) it.
const Case kCases[] = {
    {"linear(m=8,k=16,n=12) | sub(2) | mul(1.5) | relu",
     R"({"units": [{"name": "gemm", "module": "Linear", "args": {"in_features": 16, "out_features": 12, "bias": true}}],
         "bind": {"w": "gemm.weight", "bias": "gemm.bias"}})"},
    {"conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | add(input1)",
     R"({"units": [{"name": "conv", "module": "Conv3d", "args": {"in_channels": 3, "out_channels": 4,
                     "kernel_size": [3, 3, 3], "stride": [1, 1, 1], "padding": [0, 0, 0], "dilation": [1, 1, 1],
                     "groups": 1, "bias": true}},
                   {"name": "gn", "module": "GroupNorm", "args": {"num_groups": 2, "num_channels": 4, "eps": 1e-05,
                     "affine": true}}],
         "bind": {"w": "conv.weight", "bias": "conv.bias", "param0": "gn.weight", "param1": "gn.bias",
                  "input1": "input:1"}})"},
    {"conv_transpose2d(n=2,c=4,h=5,w=5,k=3,r=3,stride=2,pad=1,out_pad=1) | add(param[k]) | tanh",
     R"({"units": [{"name": "bias", "shape": [3, 1, 1], "law": "randn", "scale": 0.02},
                   {"name": "conv_transpose", "module": "ConvTranspose2d", "args": {"in_channels": 4,
                     "out_channels": 3, "kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1],
                     "output_padding": [1, 1], "dilation": [1, 1], "groups": 1, "bias": true}}],
         "bind": {"w": "conv_transpose.weight", "bias": "conv_transpose.bias", "param0": "bias"}})"},
};

std::string module_of(const Case& c, TorchFlavor flavor = TorchFlavor::kernelbench, const std::string& math = "tf32") {
  const spec::Problem p = spec::parse(c.spec);
  db::WinnerRecord w = winner_for(p, pick(variants_of(p), "unfused.stages"), false, math);
  w.cubin = std::string("\x7f" "ELF\0\"\"\"\\", 9);  // any bytes do for parsing (and spare NVRTC)
  return export_model_torch(p, w, flavor, c.init, "init.json");
}

TEST(ExportModel, ModulesAreValidPythonWithTheUnitsAndBindingsAsLiterals) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.spec);
    const std::string m = module_of(c);
    EXPECT_NE(m.find("class ModelNew(nn.Module):"), std::string::npos);
    EXPECT_NE(m.find("BIND = {\n    \"x\": \"input:0\",\n"), std::string::npos) << m.substr(0, 4000);
    EXPECT_EQ(m.find('@' + std::string("UNITS@")), std::string::npos);
    if (have_python()) {
      EXPECT_EQ(python_parse_error(m), "");
    }
  }
  // the parameter made before the conv keeps its place and its law
  const std::string m = module_of(kCases[2]);
  const size_t bias = m.find("(\"bias\", \"param\", {\"shape\": [3, 1, 1], \"law\": \"randn\", \"scale\": 0.02})");
  const size_t conv = m.find("(\"conv_transpose\", \"ConvTranspose2d\", {");
  ASSERT_NE(bias, std::string::npos) << m;
  ASSERT_NE(conv, std::string::npos);
  EXPECT_LT(bias, conv);
  EXPECT_NE(m.find("\"output_padding\": (1, 1)"), std::string::npos);  // MAIN, for F.conv_transpose2d
  // the extra input is forward's second argument, of the spec's shape
  EXPECT_NE(module_of(kCases[1]).find("INPUT_SHAPES = [(0, (2, 3, 4, 6, 6)), (1, (2, 4, 2, 4, 4))]"), std::string::npos);
  EXPECT_NE(module_of(kCases[0], TorchFlavor::torch, "fp32").find("MATH = \"fp32\""), std::string::npos);
  EXPECT_NE(module_of(kCases[0], TorchFlavor::torch).find("class Model(nn.Module):"), std::string::npos);
}

// One InputError naming what is wrong, for each way an init file can be wrong or hostile.
TEST(ExportModel, RefusesBadInitFiles) {
  const Case& lin = kCases[0];
  auto refusal = [&](const std::string& init) {
    try {
      (void)module_of({lin.spec, init.c_str()});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string unit = R"({"name": "gemm", "module": "Linear", "args": {"in_features": 16, "out_features": 12}})";
  const std::string bind = R"({"w": "gemm.weight", "bias": "gemm.bias"})";
  auto doc = [](const std::string& units, const std::string& b) { return "{\"units\": [" + units + "], \"bind\": " + b + "}"; };
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "not JSON"},
      {R"({"units": []})", "expected an object"},
      {doc(unit, R"({"w": "gemm.weight"})"), "no entry for the plan's buffer 'bias'"},
      {doc(unit, R"({"w": "gemm.weight", "bias": "gemm.bias", "t0": "gemm.bias"})"), "no buffer of the plan"},
      {doc(unit, R"({"w": "fc.weight", "bias": "gemm.bias"})"), "neither"},
      {doc(unit, R"({"w": "gemm.running_mean", "bias": "gemm.bias"})"), "neither"},
      {doc(unit, R"({"w": "input:0", "bias": "gemm.bias"})"), "neither"},
      {doc(unit, R"({"w": "gemm", "bias": "gemm.bias"})"), "neither"},  // a module is no tensor
      {doc(R"({"name": "gemm", "module": "Sequential", "args": {}})", bind), "not one this export rebuilds"},
      {doc(R"({"name": "gemm", "module": "Linear", "args": {"device": "cuda"}})", bind), "takes no keyword"},
      {doc(R"J({"name": "gemm", "module": "Linear", "args": {"in_features": "__import__('os')"}})J", bind),
       "must be a bool"},
      {doc(R"J({"name": "gemm\"); import os; (\"", "module": "Linear", "args": {}})J", bind), "plain attribute name"},
      {doc(R"({"name": "_parameters", "module": "Linear", "args": {}})", bind), "plain attribute name"},
      {doc(unit + "," + unit, bind), "twice"},
      {doc(R"({"name": "p", "shape": [3], "law": "normal"})", bind), "\"law\" must be one of"},
      {doc(R"({"name": "p", "shape": [-3], "law": "randn"})", bind), "\"shape\""},
      {doc(R"({"name": "p", "shape": [3], "law": "randn", "scale": "2"})", bind), "\"scale\""},
  };
  for (const auto& [init, want] : cases) {
    const std::string why = refusal(init);
    EXPECT_NE(why.find(want), std::string::npos) << init << "\n -> " << why;
    EXPECT_NE(why.find("--init init.json"), std::string::npos) << why;
  }
  // a conv2d chain is exported without an init file (export_torch)
  const spec::Problem chain = spec::parse("conv2d(n=1,c=3,h=8,w=8,k=4,r=3) | relu");
  const db::WinnerRecord w = winner_for(chain, pick(variants_of(chain), "unfused"), false);
  EXPECT_THROW((void)export_model_torch(chain, w, TorchFlavor::kernelbench, "{}", "init.json"), InputError);
}

// The client writes what this reader takes: the same classes, keywords and laws as
// python/fusetune_torch/init_recipe.py (plain Python: no torch needed to read its lists).
TEST(ExportModel, TheReaderAndTheClientAgreeOnUnits) {
  if (!have_python()) GTEST_SKIP() << "python3 is not on PATH";
  const std::string cmd = std::string("cd \"") + FUSETUNE_SOURCE_DIR +
                          "/python\" && python3 -c \"import json; from fusetune_torch import init_recipe as r; "
                          "print(json.dumps({'modules': {k: sorted(v) for k, v in r.MODULE_ARGS.items()}, "
                          "'laws': sorted(r.LAWS)}))\"";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  ASSERT_EQ(::pclose(pipe), 0) << out;
  const auto doc = nlohmann::json::parse(out);
  std::map<std::string, std::set<std::string>> client;
  for (const auto& [k, v] : doc.at("modules").items()) client[k] = v.get<std::set<std::string>>();
  EXPECT_EQ(client, init_unit_modules());
  EXPECT_EQ(doc.at("laws").get<std::set<std::string>>(), init_unit_laws());
}

}  // namespace
}  // namespace fusetune::exporter
