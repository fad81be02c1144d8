// The compile cache (tune/compile_cache.hpp): a second compile of the same sources with the same
// options and NVRTC takes every CUBIN from the cache, byte for byte what NVRTC made; other options
// miss; an entry that is damaged, or whose key is another kernel's, is a miss and never a wrong
// CUBIN; a cache that cannot be written costs nothing but time. GPU-free (NVRTC only).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "codegen/generate.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "tune/compile_all.hpp"
#include "tune/compile_cache.hpp"
#include "common/temp_dir.hpp"

namespace fusetune::tune {
namespace {

constexpr const char* kSpec = "conv2d(n=1,c=8,h=12,w=12,k=16,r=3) | relu | reduce_min";

struct Compiled {
  std::vector<fusetune::protocol::VariantResult> results;
  size_t compiled = 0, cached = 0;
};

Compiled compile(const std::filesystem::path& cache, bool strict_fp32 = false) {
  const auto limits = *gpu::limits_for_arch("sm_90");
  auto variants = codegen::generate_variants(spec::parse(kSpec), limits);
  variants.resize(std::min<size_t>(variants.size(), 6));
  CompileAllOptions o;
  o.cache_dir = cache;
  o.strict_fp32 = strict_fp32;
  Compiled c;
  c.results = compile_all(variants, limits, o);
  for (const auto& r : c.results) {
    if (r.variant.source.empty()) continue;
    EXPECT_EQ(r.status, fusetune::protocol::Status::ok) << r.variant.name << ": " << r.reason;
    (r.compile.from_cache ? c.cached : c.compiled) += 1;
  }
  return c;
}

size_t entries(const std::filesystem::path& dir) {
  size_t n = 0;
  if (std::filesystem::exists(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".json";
  return n;
}

TEST(CompileCache, ASecondCompileTakesEveryCubinFromTheCache) {
  const TempDir dir("ft-cc");
  const auto cache = dir.path() / "compile-cache";
  const Compiled first = compile(cache);
  ASSERT_GT(first.compiled, 0u);
  EXPECT_EQ(first.cached, 0u);
  EXPECT_EQ(entries(cache), first.compiled);
  const Compiled second = compile(cache);
  EXPECT_EQ(second.compiled, 0u);
  EXPECT_EQ(second.cached, first.compiled);
  for (size_t i = 0; i < first.results.size(); ++i) {
    const auto &a = first.results[i].compile, &b = second.results[i].compile;
    EXPECT_EQ(a.cubin, b.cubin) << first.results[i].variant.name;
    EXPECT_EQ(a.ptx, b.ptx);
    EXPECT_EQ(a.registers, b.registers);
    EXPECT_EQ(a.smem_bytes, b.smem_bytes);
    EXPECT_EQ(a.options, b.options);
  }
  // Other options (strict fp32: --fmad=false) are another key.
  const Compiled strict = compile(cache, /*strict_fp32=*/true);
  EXPECT_EQ(strict.cached, 0u);
  EXPECT_EQ(strict.compiled, first.compiled);
}

TEST(CompileCache, ADamagedOrForeignEntryIsAMissNeverAWrongCubin) {
  const TempDir dir("ft-cc");
  const auto cache = dir.path() / "compile-cache";
  const Compiled first = compile(cache);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(cache)) files.push_back(e.path());
  ASSERT_GE(files.size(), 2u);
  std::ofstream(files[0], std::ios::trunc) << "{not json";
  // An entry under the right name whose key is another source's (a hash collision, or a file put
  // there by someone else): its CUBIN must not be used.
  std::ofstream(files[1], std::ios::trunc)
      << R"({"format":1,"key":"another kernel","options_text":"","registers":1,"spill_stores":0,"spill_loads":0,)"
      << R"("stack_bytes":0,"smem_bytes":0,"compile_ms":1,"cubin":"AAAA","ptx":"AAAA"})";
  const Compiled again = compile(cache);
  EXPECT_EQ(again.compiled, 2u);
  EXPECT_EQ(again.cached, first.compiled - 2);
  for (size_t i = 0; i < first.results.size(); ++i)
    EXPECT_EQ(again.results[i].compile.cubin, first.results[i].compile.cubin) << first.results[i].variant.name;
  EXPECT_EQ(compile(cache).compiled, 0u) << "the damaged entries were replaced";
}

TEST(CompileCache, ACacheThatCannotBeWrittenCostsOnlyTime) {
  const TempDir dir("ft-cc");
  const auto blocker = dir.path() / "not-a-dir";
  std::ofstream(blocker) << "a file where the cache folder would go";
  const Compiled first = compile(blocker / "compile-cache");
  EXPECT_GT(first.compiled, 0u);
  EXPECT_EQ(compile(blocker / "compile-cache").cached, 0u);
}

// `tune` keeps its cache beside the database; --no-compile-cache makes none.
TEST(CompileCache, TuneKeepsItBesideTheDatabase) {
  const TempDir dir("ft-cc");
  const auto db = (dir.path() / "t.db").string();
  const std::string env = "FUSETUNE_TEST_WORKER=" FUSETUNE_FAKE_WORKER " FUSETUNE_DB=" + db + " ";
  auto r = fusetune::testing::run(std::string("tune '") + kSpec + "' -q --no-compile-cache", env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "compile-cache"));
  r = fusetune::testing::run(std::string("tune '") + kSpec + "' -q --force", env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GT(entries(dir.path() / "compile-cache"), 0u);
}

}  // namespace
}  // namespace fusetune::tune
