// `fusetune from-torch` and `fusetune kernelbench`, the binary's side (GPU-free, no torch needed):
// each writes the embedded
// Python package to a private directory, runs $FUSETUNE_PYTHON (default python3) on it with the
// command's arguments, and passes the exit status on; a Python that cannot be started is one line
// and exit 2. The Python itself is tested by python/tests (ctest PythonFromTorch).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "cli_run.hpp"

namespace fusetune::testing {
namespace {

// A stand-in for python3: prints its arguments and the package it was given, exits 1.
std::string fake_python() {
  const std::string path = ::testing::TempDir() + "fake_python." + std::to_string(getpid()) + ".sh";
  std::ofstream f(path);
  f << "#!/bin/sh\necho \"args: $*\"\npkg=\"${PYTHONPATH%%:*}/fusetune_torch\"\nls \"$pkg\"\nexit 1\n";
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

TEST(CliFromTorch, RunsTheEmbeddedPackageWithTheArgumentsAndPassesItsExitStatusOn) {
  const std::string py = fake_python();
  const auto r = run("from-torch model.py:Net --input-shape 8,32,64,64 --init-args '[32]' --math fp32 -o specs.txt "
                     "--json blocks.json --layout nchw",
                     "FUSETUNE_PYTHON=" + py + " ");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("args: -m fusetune_torch.from_torch model.py:Net --math fp32 --layout nchw --input-shape "
                       "8,32,64,64 --init-args [32] -o specs.txt --json blocks.json"),
            std::string::npos)
      << r.out;
  for (const char* f : {"__init__.py", "from_torch.py", "fx_adapter.py", "graph.py", "match.py", "spec_text.py"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f << " not in the package:\n" << r.out;
  std::remove(py.c_str());
}

TEST(CliFromTorch, APythonThatCannotStartIsOneLineAndExit2) {
  const auto r = run("from-torch model.py:Net --input-shape 1,3,8,8", "FUSETUNE_PYTHON=/nonexistent/python3 ");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("FUSETUNE_PYTHON"), std::string::npos) << r.err;
}

TEST(CliFromTorch, WithoutAnInputShapeTheFileDecidesAndTrainIsPassedOn) {
  // No --input-shape: the Python takes the file's get_inputs() (KernelBench's files have one).
  const std::string py = fake_python();
  const auto r = run("from-torch model.py:Net --train", "FUSETUNE_PYTHON=" + py + " ");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("args: -m fusetune_torch.from_torch model.py:Net --math tf32 --layout chain --train"),
            std::string::npos)
      << r.out;
  std::remove(py.c_str());
}

TEST(CliKernelBench, RunsTheEmbeddedDriverWithItsFlagsAndThisBinary) {
  const std::string py = fake_python();
  const auto r = run("kernelbench --kernelbench kb --problems 31,32 --rounds 5 --json out.json --no-timing",
                     "FUSETUNE_PYTHON=" + py + " ");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("args: -m fusetune_torch.kernelbench --kernelbench kb --level 2 --problems 31,32 "
                       "--precision fp32 --math auto --time-budget 120 --db kernelbench-run/tuning.db --out "
                       "kernelbench-run --trials 5 --seed 42 --perf-trials 100 --rounds 5 --json out.json "
                       "--no-timing"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("kernelbench.py"), std::string::npos) << r.out;
  std::remove(py.c_str());
}

TEST(CliKernelBench, TwoDocumentsOnStandardOutputAreRefusedBeforePythonStarts) {
  const auto r = run("kernelbench --json - --csv -", "FUSETUNE_PYTHON=/nonexistent/python3 ");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fusetune::testing
