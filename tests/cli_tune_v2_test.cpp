// `tune` of version-2 problems without a GPU (issue 43): the command takes them (the floor,
// `unfused.stages` and, for a linear chain, fused-gemm of codegen::generate_model_variants) and, on the fake worker
// (tests/fake_worker.cpp), stores a winner that `query` and `report` show, that `export` writes
// as a PyTorch module given the init file and refuses in one line as .cu/PTX or without it; without a GPU it says so (exit 3), and a problem past the CPU reference's limits is
// refused with the reason before any GPU work (exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_run.hpp"

namespace {

using fusetune::testing::run;

const std::string kLinear = "\"linear(m=64,k=32,n=16) | relu\"";

std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name + "." + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliTuneV2, ALinearProblemIsTunedStoredQueriedAndItsExportRefused) {
  const std::string dir = fresh_dir("cli_tune_v2");
  const std::string db = dir + "/t.db";
  const std::string worker = std::string("FUSETUNE_TEST_WORKER=") + FUSETUNE_FAKE_WORKER + " ";
  const auto t = run("tune " + kLinear + " -q --db " + db, worker);
  ASSERT_EQ(t.code, 0) << t.err << t.out;
  EXPECT_NE(t.out.find("cublaslt.gemm (floor)"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("unfused.stages (baseline)"), std::string::npos) << t.out;
  // The fake worker's times favour a fused-gemm variant; the floor is never the winner.
  EXPECT_NE(t.out.find("fused-gemm.n64"), std::string::npos) << t.out;
  const size_t at = t.out.find("winner   ");
  ASSERT_NE(at, std::string::npos) << t.out;
  const std::string winner = t.out.substr(at + 9, t.out.find_first_of(" \n", at + 9) - at - 9);
  EXPECT_NE(winner, "cublaslt.gemm");

  const auto q = run("query " + kLinear + " --db " + db);
  EXPECT_EQ(q.code, 0) << q.err;
  EXPECT_NE(q.out.find(winner), std::string::npos) << winner << "\n" << q.out;
  const auto all = run("query --db " + db + " --format json");
  EXPECT_EQ(all.code, 0) << all.err;

  const auto r = run("report " + kLinear + " --db " + db + " -o " + dir + "/r.html");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/r.html"));

  for (const char* format : {"cu", "ptx"}) {
    const auto e = run("export " + kLinear + " --format " + format + " --db " + db + " -o " + dir + "/x." + format);
    EXPECT_EQ(e.code, 2) << format << ": " << e.err;
    EXPECT_EQ(fusetune::testing::lines(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("version-2 plan"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/x." + format));
  }
  // The PyTorch module needs the init file (how the reference model makes its parameters)...
  const auto no_init = run("export " + kLinear + " --format torch --db " + db + " -o " + dir + "/x.py");
  EXPECT_EQ(no_init.code, 2) << no_init.err;
  EXPECT_EQ(fusetune::testing::lines(no_init.err), 1u) << no_init.err;
  EXPECT_NE(no_init.err.find("needs --init FILE"), std::string::npos) << no_init.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.py"));
  // ... and writes it with one; a bad one is refused in one line.
  std::ofstream(dir + "/init.json") << R"({"units": [{"name": "fc", "module": "Linear", "args": {"in_features": 32,
      "out_features": 16, "bias": true}}], "bind": {"w": "fc.weight", "bias": "fc.bias"}})";
  const auto with_init = run("export " + kLinear + " --format kernelbench --db " + db + " --init " + dir +
                             "/init.json -o " + dir + "/x.py");
  EXPECT_EQ(with_init.code, 0) << with_init.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/x.py"));
  std::ofstream(dir + "/bad.json") << R"({"units": [], "bind": {"w": "fc.weight"}})";
  const auto bad = run("export " + kLinear + " --format kernelbench --db " + db + " --init " + dir + "/bad.json -o " +
                       dir + "/y.py");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(fusetune::testing::lines(bad.err), 1u) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/y.py"));
  const auto cu_init = run("export " + kLinear + " --format cu --db " + db + " --init " + dir + "/init.json");
  EXPECT_EQ(cu_init.code, 2) << cu_init.err;
  std::filesystem::remove_all(dir);
}

TEST(CliTuneV2, AConv3dProblemRunsOnTheFakeWorker) {
  const std::string dir = fresh_dir("cli_tune_v2_conv3d");
  const auto t = run("tune \"conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | add(input1)\" -q --db " + dir + "/t.db",
                     std::string("FUSETUNE_TEST_WORKER=") + FUSETUNE_FAKE_WORKER + " ");
  ASSERT_EQ(t.code, 0) << t.err << t.out;
  EXPECT_NE(t.out.find("cudnn.conv-nd (floor)"), std::string::npos) << t.out;
  std::filesystem::remove_all(dir);
}

// Past the float64 reference's limits (worker::why_no_model_reference): exit 2 with the reason,
// before the GPU is looked for (this machine may have none: the line would then be exit 3's).
TEST(CliTuneV2, PastTheReferencesLimitIsRefusedBeforeAnyGpuWork) {
  const std::string dir = fresh_dir("cli_tune_v2_big");
  // (softmax over dim 0 mixes the rows: no block of rows can stand for the whole)
  auto t = run("tune \"linear(m=65536,k=65536,n=4096) | softmax(0)\" --db " + dir + "/t.db");
  EXPECT_EQ(t.code, 2) << t.err;
  EXPECT_EQ(fusetune::testing::lines(t.err), 1u) << t.err;
  EXPECT_NE(t.err.find("reference (on the GPU) is limited to 1e+13 multiply-adds"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("1.76e+13"), std::string::npos) << t.err;
  t = run("tune \"linear(m=16384,k=1,n=16384) | softmax(0)\" --db " + dir + "/t.db");
  EXPECT_EQ(t.code, 2) << t.err;
  EXPECT_NE(t.err.find("hold at most 134217728 values"), std::string::npos) << t.err;
  EXPECT_NE(t.err.find("268435456"), std::string::npos) << t.err;
  std::filesystem::remove_all(dir);
}

// Without a GPU the command takes the problem and says that no GPU was found (exit 3), not that
// it has no candidates for it.
TEST(CliTuneV2, WithoutAGpuItSaysSoNotThatItHasNoCandidates) {
  const std::string dir = fresh_dir("cli_tune_v2_nogpu");
  const auto t = run("tune " + kLinear + " --force --db " + dir + "/t.db");
  if (t.code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(t.code, 3) << t.err;
  EXPECT_EQ(t.err.find("no candidates"), std::string::npos) << t.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
