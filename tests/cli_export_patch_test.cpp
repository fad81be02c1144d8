// `fusetune export --format torch-patch` from the command line (GPU-free): it needs a spec file
// (and only with this format), refuses one without from-torch's records with one line naming the
// line (exit 2), and one whose problems have no stored winner with exit 4; `--format kernelbench`
// of a stored winner writes a module with KernelBench's ModelNew. The database is a fresh one,
// which holds the shipped records (tuning_db/shipped/).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli_run.hpp"
#include "codegen/cudnn_engine.hpp"
#include "templates/embedded_templates.hpp"
#include "db/database.hpp"
#include "export_test_winners.hpp"

namespace fusetune {
namespace {

namespace fs = std::filesystem;
using testing::run;

struct ExportPatchCli : ::testing::Test {
  fs::path dir = fs::path(::testing::TempDir()) / ("fusetune_export_patch_" + std::to_string(getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  std::string db() const { return (dir / "t.db").string(); }
};

constexpr const char* kRecord =
    R"(#@block {"conv":"conv","nodes":["conv","min","add","mul"],"output":"mul","params":[{"kind":"tensor","path":"bias"}]})";

TEST_F(ExportPatchCli, TheSpecFileGoesWithTorchPatchOnly) {
  auto r = run("export --format torch-patch --db " + db());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--format torch-patch needs --spec-file FILE"), std::string::npos) << r.err;
  const std::string specs = write("s.txt", std::string("kernelbench-31\n") + kRecord + "\n");
  r = run("export --preset kernelbench-31 --format torch --spec-file " + specs + " --db " + db());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--spec-file is for --format torch-patch"), std::string::npos) << r.err;
  r = run("export --preset kernelbench-31 --format torch-patch --spec-file " + specs + " --db " + db());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("takes its problems from --spec-file"), std::string::npos) << r.err;
}

TEST_F(ExportPatchCli, ASpecLineWithoutItsRecordIsOneLineNamingIt) {
  const std::string specs = write("s.txt", "# from somewhere\nkernelbench-31\n");
  const auto r = run("export --format torch-patch --spec-file " + specs + " --db " + db());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(specs + ":2: no #@block record after this spec"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST_F(ExportPatchCli, AProblemWithoutAWinnerIsExit4) {
  const std::string specs =
      write("s.txt", std::string("conv2d(n=1,c=3,h=9,w=9,k=4,r=3) | mul(param[k])\n") + kRecord + "\n");
  const auto r = run("export --format torch-patch --spec-file " + specs + " --db " + db());
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("no tf32 winner stored for conv2d(n=1,c=3,h=9,w=9,k=4"), std::string::npos) << r.err;
}

TEST_F(ExportPatchCli, ShippedWinnersExportAsKernelBenchAndAsAPatch) {
  // kernelbench-31's shipped tf32 winner (no cuDNN graph: PyTorch runs it).
  auto r = run("export --preset kernelbench-31 --format kernelbench --db " + db() + " -o " + (dir / "kb.py").string());
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(dir / "kb.py");
  const std::string kb(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(kb.find("class ModelNew(nn.Module):"), std::string::npos);
  const std::string specs = write("s.txt", std::string("kernelbench-31  # conv\n") + kRecord + "\n");
  r = run("export --format torch-patch --spec-file " + specs + " --db " + db() + " -o " + (dir / "p.py").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("1 block(s) of " + specs), std::string::npos) << r.err;
  std::ifstream pin(dir / "p.py");
  const std::string patch(std::istreambuf_iterator<char>(pin), {});
  EXPECT_NE(patch.find("def patch(model):"), std::string::npos);
}

// A cudnn-fused winner runs cuDNN's fused graph, which a PyTorch module cannot: the PyTorch
// exports take the fastest verified result of the same tune that it can run (regenerated: a
// result names its variant only), and say so; a cudnn-fused result is never that one.
TEST_F(ExportPatchCli, ACudnnFusedWinnerExportsTheFastestVariantTorchCanRun) {
  using exporter::testing::pick;
  const spec::Problem p = exporter::testing::preset("kernelbench-32");
  const auto variants = exporter::testing::variants_of(p);
  const codegen::Variant fused = codegen::with_engine(pick(variants, "cudnn-fused.x-nhwc"), {7, {{24, 29}}});
  const codegen::Variant epi = pick(variants, "epilogue.nchw");
  db::WinnerRecord w = exporter::testing::winner_for(p, fused, false);
  w.env.templates_hash = templates::templates_hash();
  w.time_median_ms = 2.2;
  auto result = [&](const codegen::Variant& v, double ms) {
    db::ResultRecord r;
    r.problem_key = w.problem_key;
    r.canonical = w.canonical;
    r.math = "tf32";
    r.candidate = std::string(codegen::candidate_name(v.candidate));
    r.variant_name = v.name;
    r.params_json = "{}";
    r.status = "ok";
    r.time_min_ms = r.time_median_ms = r.time_max_ms = ms;
    r.time_count = 15;
    return r;
  };
  {
    auto d = db::Database::open(db(), db::OpenOptions{.load_shipped = false});
    d.write_winner(w);
    d.write_results(w.env, {result(fused, 2.2), result(epi, 2.5)});
  }
  const auto r = run("export --preset kernelbench-32 --format torch --db " + db() + " -o " + (dir / "m.py").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: the winner " + fused.name + " (2.200 ms) runs cuDNN's fused graph, which PyTorch cannot "
                       "run: exporting " + epi.name + " (2.500 ms)"),
            std::string::npos)
      << r.err;
  std::ifstream in(dir / "m.py");
  const std::string m(std::istreambuf_iterator<char>(in), {});
  EXPECT_NE(m.find("# winner:    " + epi.name), std::string::npos);
  EXPECT_NE(m.find("CUBIN = base64.b64decode("), std::string::npos);
  // cu still exports the winner itself.
  const auto cu = run("export --preset kernelbench-32 --format cu --db " + db());
  EXPECT_EQ(cu.code, 0) << cu.err;
  EXPECT_NE(cu.out.find(fused.name), std::string::npos);
}

}  // namespace
}  // namespace fusetune
