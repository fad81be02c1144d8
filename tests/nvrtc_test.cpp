// GPU-free: NVRTC compiles, the ptxas report parser, and the compile result contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "gpu/nvrtc_check.hpp"
#include "gpu/nvrtc_program.hpp"
#include "gpu/ptxas_info.hpp"

namespace fusetune::gpu {
namespace {

const char* const kAffine = R"(
extern "C" __global__ void affine(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
extern "C" __global__ void muladd(float* y, const float* a, const float* b, const float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] * b[i] + c[i];
}
)";

// 64 accumulators live across a loop: under --maxrregcount=24 ptxas must spill them.
const char* const kSpilling = R"(
extern "C" __global__ void spill(float* y, const float* x, int n) {
  float acc[64];
#pragma unroll
  for (int j = 0; j < 64; ++j) acc[j] = x[threadIdx.x + j * n];
#pragma unroll 1
  for (int it = 0; it < n; ++it) {
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[j] = acc[j] * acc[(j + 1) % 64] + x[it + j];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 64; ++j) s += acc[j];
  y[threadIdx.x] = s;
}
)";

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// --- compile_cuda ------------------------------------------------------------

class CompileForArch : public ::testing::TestWithParam<const char*> {};

TEST_P(CompileForArch, ProducesElfCubinPtxAndResources) {
  CompileOptions opts;
  opts.arch = GetParam();
  const CompileResult r = compile_cuda(kAffine, "affine.cu", opts);
  ASSERT_TRUE(r.ok()) << r.log;
  EXPECT_EQ(r.status, CompileStatus::ok);
  EXPECT_TRUE(has(r.options, std::string("--gpu-architecture=") + GetParam()));
  EXPECT_TRUE(has(r.options, "-Xptxas=-v"));
  EXPECT_TRUE(has(r.options, "--no-cache"));  // a driver-cache hit would print no ptxas report
  EXPECT_FALSE(has(r.options, "--fmad=false"));
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF"));
  EXPECT_NE(r.ptx.find(".entry affine("), std::string::npos);
  EXPECT_NE(r.log.find(std::string("for '") + GetParam() + "'"), std::string::npos) << r.log;
  EXPECT_GT(r.registers, 0);
  EXPECT_EQ(r.spill_stores, 0);
  EXPECT_EQ(r.spill_loads, 0);
  EXPECT_GT(r.compile_ms, 0.0);
  std::vector<std::string> names = r.kernel_names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"affine", "muladd"}));
  ASSERT_EQ(r.kernels.size(), 2u);
  for (const auto& k : r.kernels) {
    EXPECT_GT(k.registers, 0) << k.kernel;
    EXPECT_LE(k.registers, r.registers);
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CompileForArch, ::testing::Values("sm_80", "sm_90"));

TEST(Compile, SyntaxErrorIsAResultWithTheCompilersWords) {
  const CompileResult r =
      compile_cuda("extern \"C\" __global__ void k(float* y) { y[0] = 1.0f }\n", "broken.cu", {});
  EXPECT_EQ(r.status, CompileStatus::compile_failed);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.log.find("broken.cu(1): error"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("expected a \";\""), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_TRUE(r.ptx.empty());
}

// ptxas puts its error after a NUL in NVRTC's log; it must not be cut off.
TEST(Compile, PtxasErrorAfterTheInfoLinesIsKept) {
  const char* src = R"(
extern "C" __global__ void k(float* y) {
  __shared__ float big[100000];
  big[threadIdx.x] = y[0];
  __syncthreads();
  y[threadIdx.x] = big[threadIdx.x + 1];
})";
  const CompileResult r = compile_cuda(src, "bigsmem.cu", {});
  EXPECT_EQ(r.status, CompileStatus::compile_failed);
  EXPECT_NE(r.log.find("uses too much shared data"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find('\0'), std::string::npos);
  EXPECT_EQ(r.smem_bytes, 400000);  // figures still parsed from the failed compile
}

TEST(Compile, StrictFp32TurnsOffContraction) {
  CompileOptions strict;
  strict.strict_fp32 = true;
  const CompileResult s = compile_cuda(kAffine, "affine.cu", strict);
  ASSERT_TRUE(s.ok()) << s.log;
  EXPECT_TRUE(has(s.options, "--fmad=false"));
  // a[i] * b[i] + c[i]: separate rounded mul and add, no fused multiply-add.
  EXPECT_EQ(s.ptx.find("fma.rn.f32"), std::string::npos);
  EXPECT_NE(s.ptx.find("mul.rn.f32"), std::string::npos);

  const CompileResult relaxed = compile_cuda(kAffine, "affine.cu", {});
  ASSERT_TRUE(relaxed.ok()) << relaxed.log;
  EXPECT_NE(relaxed.ptx.find("fma.rn.f32"), std::string::npos);
}

TEST(Compile, NeverUsesFastMath) {
  for (const bool strict : {false, true}) {
    CompileOptions o;
    o.strict_fp32 = strict;
    for (const auto& opt : nvrtc_options(o)) EXPECT_EQ(opt.find("fast"), std::string::npos) << opt;
  }
}

TEST(Compile, ForcedSpillsAreReported) {
  CompileOptions opts;
  opts.max_registers = 24;
  const CompileResult r = compile_cuda(kSpilling, "spill.cu", opts);
  ASSERT_TRUE(r.ok()) << r.log;
  EXPECT_TRUE(has(r.options, "--maxrregcount=24"));
  EXPECT_LE(r.registers, 24);
  EXPECT_GT(r.spill_stores, 0) << r.log;
  EXPECT_GT(r.spill_loads, 0) << r.log;
  EXPECT_GT(r.stack_bytes, 0);

  const CompileResult unlimited = compile_cuda(kSpilling, "spill.cu", {});
  ASSERT_TRUE(unlimited.ok());
  EXPECT_EQ(unlimited.spill_stores, 0) << unlimited.log;
  EXPECT_GT(unlimited.registers, 24);
}

TEST(Compile, WithoutPtxasVerboseResourcesAreUnknown) {
  CompileOptions opts;
  opts.ptxas_verbose = false;
  const CompileResult r = compile_cuda(kAffine, "affine.cu", opts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(has(r.options, "-Xptxas=-v"));
  EXPECT_FALSE(has(r.options, "--no-cache"));
  EXPECT_EQ(r.registers, -1);
  EXPECT_TRUE(r.kernels.empty());
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.kernel_names.size(), 2u);  // names come from the PTX, not the ptxas log
}

TEST(Compile, ComputeArchGivesPtxOnly) {
  CompileOptions opts;
  opts.arch = "compute_90";
  const CompileResult r = compile_cuda(kAffine, "affine.cu", opts);
  ASSERT_TRUE(r.ok()) << r.log;
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos);
}

TEST(Compile, CudaHeadersResolve) {
  const char* src = R"(
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
extern "C" __global__ void h(float* y) { y[0] = __half2float(__float2half(y[0])) + cuda::std::int32_t{1}; }
)";
  const CompileResult r = compile_cuda(src, "headers.cu", {});
  EXPECT_TRUE(r.ok()) << r.log;
  EXPECT_FALSE(cuda_include_dirs().empty());
}

TEST(Compile, ExtraOptionsComeLast) {
  CompileOptions opts;
  opts.extra = {"-lineinfo"};
  const auto o = nvrtc_options(opts);
  ASSERT_FALSE(o.empty());
  EXPECT_EQ(o.back(), "-lineinfo");
  EXPECT_EQ(o.front(), "--gpu-architecture=sm_90");
  EXPECT_TRUE(has(o, "-std=c++17"));
  EXPECT_TRUE(has(o, "-default-device"));
  EXPECT_TRUE(compile_cuda(kAffine, "affine.cu", opts).ok());
}

TEST(Compile, RejectedOptionsAreBadInput) {
  CompileOptions opts;
  opts.arch = "sm_999";
  try {
    (void)compile_cuda(kAffine, "affine.cu", opts);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("--gpu-architecture"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(Compile, ConcurrentCompilesFromFourThreads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 3;
  std::vector<std::vector<CompileResult>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &results] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string name = "k" + std::to_string(t) + "_" + std::to_string(i);
        const std::string src = "extern \"C\" __global__ void " + name +
                                "(float* y) { y[threadIdx.x] *= " + std::to_string(t * 10 + i + 2) + ".0f; }\n";
        results[static_cast<size_t>(t)].push_back(compile_cuda(src, name + ".cu", {}));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const CompileResult& r = results[static_cast<size_t>(t)][static_cast<size_t>(i)];
      const std::string name = "k" + std::to_string(t) + "_" + std::to_string(i);
      ASSERT_TRUE(r.ok()) << r.log;
      EXPECT_EQ(r.kernel_names, std::vector<std::string>{name});
      ASSERT_EQ(r.kernels.size(), 1u);
      EXPECT_EQ(r.kernels[0].kernel, name);
      EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF"));
    }
  }
}

TEST(Nvrtc, VersionAndArchs) {
  EXPECT_TRUE(std::regex_match(nvrtc_version(), std::regex(R"(\d+\.\d+)"))) << nvrtc_version();
  const auto archs = nvrtc_supported_archs();
  EXPECT_TRUE(has(archs, "sm_80"));
  EXPECT_TRUE(has(archs, "sm_90"));
}

TEST(Nvrtc, CheckMacroThrowsWithCallTextAndErrorName) {
  try {
    size_t size = 0;
    FT_NVRTC_CALL(nvrtcGetPTXSize(nullptr, &size));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_NE(what.find("nvrtc_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("nvrtcGetPTXSize(nullptr, &size)"), std::string::npos) << what;
    EXPECT_NE(what.find("NVRTC_ERROR_INVALID_PROGRAM"), std::string::npos) << what;
  }
}

TEST(Nvrtc, ProgramIsMoveOnly) {
  static_assert(!std::is_copy_constructible_v<NvrtcProgram>);
  static_assert(!std::is_copy_assignable_v<NvrtcProgram>);
  NvrtcProgram a("extern \"C\" __global__ void k() {}", "k.cu");
  const nvrtcProgram handle = a.get();
  NvrtcProgram b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is the point
  EXPECT_EQ(b.get(), handle);
  NvrtcProgram c("extern \"C\" __global__ void j() {}", "j.cu");
  c = std::move(b);
  EXPECT_EQ(c.get(), handle);
  EXPECT_EQ(c.compile({"--gpu-architecture=sm_90"}), NVRTC_SUCCESS);
  EXPECT_FALSE(c.cubin().empty());
}

// --- parse_ptxas_info against logs NVRTC 13.0 printed (-Xptxas=-v) ---------------

// sm_90, --maxrregcount=24: a spilling kernel and a caller of a non-inlined device function.
const char* const kLogSm90Spill =
    "ptxas info    : Overriding maximum register limit 256 for 'callsit' with  24 of maxrregcount option\n"
    "ptxas info    : Overriding maximum register limit 256 for 'spill' with  24 of maxrregcount option\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'callsit' for 'sm_90'\n"
    "ptxas info    : Function properties for callsit\n"
    "ptxas         .     32 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 16 registers, used 0 barriers, 32 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 4.846 ms\n"
    "ptxas info    : Function properties for _Z6helperf\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Compiling entry function 'spill' for 'sm_90'\n"
    "ptxas info    : Function properties for spill\n"
    "ptxas         .     560 bytes stack frame, 1116 bytes spill stores, 872 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 0 barriers, 560 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 33.849 ms\n";

// sm_80: constant bank, static shared memory, a local array (stack, no spill).
const char* const kLogSm80 =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'spill' for 'sm_80'\n"
    "ptxas info    : Function properties for spill\n"
    "ptxas         .     1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 24 registers, used 1 barriers, 1024 bytes cumulative stack size, 1024 bytes smem, "
    "372 bytes cmem[0]\n"
    "ptxas info    : Compile time = 42.248 ms\n"
    "ptxas info    : Compiling entry function 'axpy' for 'sm_80'\n"
    "ptxas info    : Function properties for axpy\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers, 376 bytes cmem[0]\n"
    "ptxas info    : Compile time = 1.339 ms\n";

TEST(PtxasInfo, ParsesSpillsAndSkipsDeviceFunctions) {
  const auto k = parse_ptxas_info(kLogSm90Spill);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kernel, "callsit");
  EXPECT_EQ(k[0].registers, 16);
  EXPECT_EQ(k[0].stack_bytes, 32);
  EXPECT_EQ(k[0].spill_stores, 0);
  EXPECT_EQ(k[1].kernel, "spill");
  EXPECT_EQ(k[1].registers, 24);
  EXPECT_EQ(k[1].spill_stores, 1116);
  EXPECT_EQ(k[1].spill_loads, 872);
  EXPECT_EQ(k[1].stack_bytes, 560);
  EXPECT_EQ(k[1].smem_bytes, 0);
  EXPECT_EQ(k[1].cmem_bytes, 0);
}

TEST(PtxasInfo, ParsesSmemCmemAndStack) {
  const auto k = parse_ptxas_info(kLogSm80);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].kernel, "spill");
  EXPECT_EQ(k[0].registers, 24);
  EXPECT_EQ(k[0].stack_bytes, 1024);
  EXPECT_EQ(k[0].smem_bytes, 1024);
  EXPECT_EQ(k[0].cmem_bytes, 372);
  EXPECT_EQ(k[0].spill_stores, 0);
  EXPECT_EQ(k[1].kernel, "axpy");
  EXPECT_EQ(k[1].registers, 10);
  EXPECT_EQ(k[1].cmem_bytes, 376);
}

// Older ptxas wording: indented stack line, "used N bytes smem", several constant banks.
TEST(PtxasInfo, ParsesOlderWording) {
  const char* log =
      "ptxas info    : Compiling entry function 'foo' for 'sm_75'\n"
      "ptxas info    : Function properties for foo\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1024 bytes smem, 380 bytes cmem[0], 8 bytes cmem[2]\n";
  const auto k = parse_ptxas_info(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kernel, "foo");
  EXPECT_EQ(k[0].registers, 32);
  EXPECT_EQ(k[0].smem_bytes, 1024);
  EXPECT_EQ(k[0].cmem_bytes, 388);
  EXPECT_EQ(k[0].stack_bytes, 8);
  EXPECT_EQ(k[0].spill_stores, 4);
  EXPECT_EQ(k[0].spill_loads, 4);
}

TEST(PtxasInfo, MangledNamesAndNoiseAreHandled) {
  const char* log =
      "ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of 24\n"
      "ptxas info    : Compiling entry function '_Z2tkILi3EEvPf' for 'sm_80'\r\n"
      "ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\r\n"
      "something unexpected : 12 bytes of nothing\n";
  const auto k = parse_ptxas_info(log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kernel, "_Z2tkILi3EEvPf");
  EXPECT_EQ(k[0].registers, 8);
  EXPECT_EQ(k[0].cmem_bytes, 360);
  EXPECT_TRUE(parse_ptxas_info("").empty());
  EXPECT_TRUE(parse_ptxas_info("t.cu(1): error: expected a \";\"\n").empty());
}

TEST(PtxasInfo, MatchesWhatCompileReports) {
  CompileOptions opts;
  opts.max_registers = 24;
  const CompileResult r = compile_cuda(kSpilling, "spill.cu", opts);
  ASSERT_TRUE(r.ok()) << r.log;
  const auto k = parse_ptxas_info(r.log);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].kernel, "spill");
  EXPECT_EQ(k[0].registers, r.registers);
  EXPECT_EQ(k[0].spill_stores, r.spill_stores);
}

}  // namespace
}  // namespace fusetune::gpu
