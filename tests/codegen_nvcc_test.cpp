// The kernel templates and the generated sources compile (GPU-free):
//  - every template in kernel_templates/ with `nvcc -arch=sm_90 -c`, on its sample defines;
//  - one generated source per design with nvcc too (what `export --format cu` promises);
//  - every variant of both presets and of the awkward shapes with NVRTC for sm_90 (sm_90a for
//    arch-specific ones: codegen/compile_target.hpp), with status ok and no register spills.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "codegen/compile_target.hpp"
#include "codegen/generate.hpp"
#include "codegen_problems.hpp"
#include "gpu/compiler.hpp"
#include "spec/parser.hpp"

namespace fusetune::codegen {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("fusetune_codegen_nvcc_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

bool have_nvcc() { return std::system("nvcc --version > /dev/null 2>&1") == 0; }

// Runs nvcc -c on `file`; returns "" on success, else the compiler's output.
std::string nvcc_compile(const fs::path& file, const fs::path& dir, const std::string& arch_flag = "-arch=sm_90") {
  const fs::path obj = dir / (file.stem().string() + ".o");
  const fs::path log = dir / (file.stem().string() + ".log");
  const std::string cmd = "nvcc " + arch_flag + " -c \"" + file.string() + "\" -o \"" + obj.string() +
                          "\" > \"" + log.string() + "\" 2>&1";
  if (std::system(cmd.c_str()) == 0) return "";
  std::ifstream in(log);
  return cmd + "\n" + std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Nvcc, EveryTemplateCompilesOnItsSampleDefines) {
  if (!have_nvcc()) GTEST_SKIP() << "nvcc is not on PATH";
  const fs::path templates = fs::path(FUSETUNE_SOURCE_DIR) / "kernel_templates";
  const fs::path dir = temp_dir();
  int compiled = 0;
  for (const auto& entry : fs::directory_iterator(templates)) {
    if (entry.path().extension() != ".cu") continue;
    EXPECT_EQ(nvcc_compile(entry.path(), dir), "") << entry.path();
    ++compiled;
  }
  EXPECT_GE(compiled, 6);
  fs::remove_all(dir);
}

TEST(Nvcc, OneGeneratedSourcePerDesignCompiles) {
  if (!have_nvcc()) GTEST_SKIP() << "nvcc is not on PATH";
  const gpu::DeviceLimits dev;
  std::vector<spec::Problem> problems = {testing::preset31(), testing::preset32()};
  for (const auto& p : testing::awkward_problems()) problems.push_back(p);
  // The first variant of each design (prefix + kernel) across the problems.
  std::map<std::string, Variant> firsts;
  for (const auto& p : problems) {
    for (const auto& v : generate_variants(p, dev)) {
      if (v.source.empty()) continue;
      std::string last_kernel;
      for (const auto& st : v.plan)
        if (st.kind() == StepKind::kernel) last_kernel = st.kernel().name;
      const std::string key = v.design + "/" + last_kernel;
      firsts.emplace(key, v);
    }
  }
  EXPECT_GE(firsts.size(), 8u);
  const fs::path dir = temp_dir();
  int i = 0;
  for (const auto& [key, v] : firsts) {
    const fs::path file = dir / ("generated_" + std::to_string(i++) + ".cu");
    std::ofstream(file) << v.source;
    EXPECT_EQ(nvcc_compile(file, dir, nvcc_arch_flag(v, "sm_90")), "") << key << " (" << v.name << ")";
  }
  fs::remove_all(dir);
}

struct Compiled {
  std::string name;
  gpu::CompileResult result;
};

// Compiles every variant with NVRTC on two threads (the machine's cores).
std::vector<Compiled> compile_all(const std::vector<Variant>& variants, bool strict_fp32) {
  std::vector<const Variant*> todo;
  for (const auto& v : variants) {
    if (!v.source.empty()) todo.push_back(&v);
  }
  std::vector<Compiled> out(todo.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) {
      // The tuner's options: sm_90, or sm_90a for an arch-specific (fused-conv) variant.
      const gpu::CompileOptions opt = compile_options(*todo[i], "sm_90", strict_fp32);
      out[i] = Compiled{todo[i]->name, gpu::compile_cuda(todo[i]->source, todo[i]->name + ".cu", opt)};
    }
  };
  auto a = std::async(std::launch::async, worker);
  auto b = std::async(std::launch::async, worker);
  a.get();
  b.get();
  return out;
}

void expect_all_compile(const std::vector<Variant>& variants, const std::string& what, bool strict_fp32 = false) {
  const auto start = std::chrono::steady_clock::now();
  const auto results = compile_all(variants, strict_fp32);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int max_regs = 0;
  for (const auto& c : results) {
    EXPECT_TRUE(c.result.ok()) << c.name << "\n" << c.result.log;
    EXPECT_EQ(c.result.spill_stores, 0) << c.name << "\n" << c.result.log;
    EXPECT_EQ(c.result.spill_loads, 0) << c.name << "\n" << c.result.log;
    max_regs = std::max(max_regs, c.result.registers);
  }
  std::printf("[ codegen  ] %s: %zu sources compiled by NVRTC in %.1f s on 2 threads, max %d registers\n",
              what.c_str(), results.size(), seconds, max_regs);
}

TEST(Nvrtc, EveryPreset31VariantCompilesWithoutSpills) {
  expect_all_compile(generate_variants(testing::preset31(), gpu::DeviceLimits{}), "kernelbench-31");
}

TEST(Nvrtc, EveryPreset32VariantCompilesWithoutSpills) {
  expect_all_compile(generate_variants(testing::preset32(), gpu::DeviceLimits{}), "kernelbench-32");
}

TEST(Nvrtc, EveryAwkwardVariantCompilesWithoutSpills) {
  std::vector<Variant> all;
  for (const auto& p : testing::awkward_problems()) {
    for (auto& v : generate_variants(p, gpu::DeviceLimits{})) all.push_back(std::move(v));
  }
  expect_all_compile(all, "awkward shapes");
  expect_all_compile(all, "awkward shapes, --math fp32", true);
}

// Tensors past 2^31 elements (issue 42, item 5): every variant takes 64-bit flat indices
// (FT_INDEX_64) and compiles. 46341^2 pixels is one image past 2^31: its extents are template
// arguments of the transposes (once a narrowing "no instance of ft_transpose_block") and its
// pixel index wrapped in the reduction and the gather conv; 8 x 16 x 4100^2 passes 2^31 outputs
// with every design.
TEST(Nvrtc, EveryVariantOfAProblemPast2To31ElementsCompiles) {
  std::vector<Variant> all;
  for (const char* spec : {"conv2d(n=1,c=1,h=46341,w=46341,k=1,r=1)",
                           "conv2d(n=1,c=1,h=46341,w=46341,k=2,r=1) | mul(2.0) | reduce_min(channel)",
                           "conv2d(n=8,c=4,h=4100,w=4100,k=16,r=1) | relu"}) {
    for (auto& v : generate_variants(spec::parse(spec), gpu::DeviceLimits{})) {
      if (!v.source.empty()) {
        EXPECT_NE(v.source.find("#define FT_INDEX_64 1"), std::string::npos) << spec << ": " << v.name;
      }
      all.push_back(std::move(v));
    }
  }
  expect_all_compile(all, "problems past 2^31 elements");
}

}  // namespace
}  // namespace fusetune::codegen
