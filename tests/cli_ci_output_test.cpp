// What CI pipelines read from fusetune: `--version` names every version a bug report needs, and
// `smoke --junit FILE` writes JUnit XML a test reporter parses, with `--require-gpu` failing (not
// skipping) on a machine without a GPU. GPU-free: this machine has no driver, which is the case
// --require-gpu exists for (on a GPU machine that test skips).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "cli/junit.hpp"
#include "cli_run.hpp"
#include "gpu/driver_api.hpp"
#include "common/temp_dir.hpp"

namespace {

using fusetune::testing::run;

std::string read(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

TEST(CliCiOutput, VersionNamesFusetuneNvrtcCudnnAndTheDriver) {
  const auto r = run("--version");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("fusetune " FUSETUNE_VERSION "\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("NVRTC 13."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cuDNN 9."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cudnn-frontend " FUSETUNE_CUDNN_FRONTEND_VERSION), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("driver"), std::string::npos) << r.out;
}

TEST(CliCiOutput, SmokeWritesJunitAndRequireGpuFailsWithoutOne) {
  std::string why;
  if (fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "a driver is present: --require-gpu would pass";
  const fusetune::TempDir dir("ft-junit");
  const std::string db = (dir.path() / "t.db").string();
  const std::string xml = (dir.path() / "smoke.xml").string();
  const auto r = run("smoke --checks database --db " + db + " --junit " + xml + " --require-gpu");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL  a GPU (--require-gpu): no NVIDIA driver found"), std::string::npos) << r.out;
  const std::string x = read(xml);
  EXPECT_EQ(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>", 0), 0u) << x;
  EXPECT_NE(x.find("failures=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<testcase classname=\"fusetune.smoke\" name=\"database opens and migrates\">"), std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"a GPU (--require-gpu)\"><failure message=\"no NVIDIA driver found"), std::string::npos) << x;
  // Without --require-gpu the same machine passes (the GPU checks are skipped, and say so).
  const auto lenient = run("smoke --checks database --db " + db + " --junit " + xml);
  EXPECT_EQ(lenient.code, 0) << lenient.out;
  EXPECT_NE(read(xml).find("<skipped message=\"no NVIDIA driver found"), std::string::npos);
}

TEST(CliCiOutput, JunitTextIsEscapedAndControlCharactersDropped) {
  EXPECT_EQ(fusetune::cli::xml_escape("a<b>&\"c'\x1b[2J\x01 d\tе"), "a&lt;b&gt;&amp;&quot;c&apos;[2J d\tе");
  EXPECT_EQ(fusetune::cli::xml_escape(std::string("\xff\xc3", 2)), "??");
  const std::vector<fusetune::cli::SmokeCheck> checks = {
      {"winner <script>", fusetune::cli::SmokeCheck::Outcome::failed, "slower \"than\" & unfused"}};
  const std::string x = fusetune::cli::junit_xml(checks);
  EXPECT_NE(x.find("name=\"winner &lt;script&gt;\"><failure message=\"slower &quot;than&quot; &amp; unfused\"/>"),
            std::string::npos)
      << x;
  EXPECT_EQ(x.find("<script>"), std::string::npos);
}

}  // namespace
