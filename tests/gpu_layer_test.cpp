// GPU tests of the driver layer (labelled `gpu` by file name): device query, memory,
// NVRTC -> Module -> launch, timing, RAII. Each test skips with the reason without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "gpu/context.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/event.hpp"
#include "gpu/module.hpp"
#include "gpu/stream.hpp"

namespace fusetune::gpu {
namespace {

const char* const kKernels = R"(
extern "C" __global__ void affine(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
// Reverses x into y through dynamic shared memory (needs n * 4 bytes of it).
extern "C" __global__ void smem_reverse(float* y, const float* x, int n) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = s[n - 1 - i];
}
extern "C" __global__ void fault(int* p) { *(volatile int*)((char*)p + 8) = 1; }
)";

class GpuLayer : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    info_ = query_device(0);
  }

  CompileResult compile_for_device(CompileOptions opts = {}) const {
    opts.arch = info_.limits.arch_flag();
    CompileResult r = compile_cuda(kKernels, "gpu_layer.cu", opts);
    EXPECT_TRUE(r.ok()) << r.log;
    return r;
  }

  static std::vector<float> iota_floats(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 4096) * 0.25f - 7.0f;
    return v;
  }

  DeviceInfo info_;
};

TEST_F(GpuLayer, QueryDeviceIsSane) {
  EXPECT_GE(device_count(), 1);
  EXPECT_FALSE(info_.name.empty());
  EXPECT_EQ(info_.limits.name, info_.name);
  EXPECT_FALSE(info_.pci_bus_id.empty());
  EXPECT_GE(info_.limits.cc_major, 7);
  EXPECT_GT(info_.limits.sm_count, 0);
  EXPECT_EQ(info_.limits.warp_size, 32);
  EXPECT_EQ(info_.limits.max_threads_per_block, 1024);
  EXPECT_GE(info_.limits.max_threads_per_sm, 1024);
  EXPECT_GE(info_.limits.max_blocks_per_sm, 16);
  EXPECT_GE(info_.limits.regs_per_sm, 65536);
  EXPECT_GE(info_.limits.regs_per_block, 65536);
  EXPECT_EQ(info_.limits.smem_per_block, 48 * 1024);
  EXPECT_GE(info_.limits.smem_per_block_optin, info_.limits.smem_per_block);
  EXPECT_GE(info_.limits.smem_per_sm, info_.limits.smem_per_block_optin);
  EXPECT_GT(info_.limits.l2_bytes, 1 << 20);
  EXPECT_GT(info_.total_mem, int64_t{1} << 30);
  EXPECT_EQ(info_.limits.global_mem_bytes, info_.total_mem);
  EXPECT_GE(info_.driver_version, 12000);
  EXPECT_GT(info_.clock_khz, 0);
  EXPECT_GT(info_.mem_clock_khz, 0);
  EXPECT_GT(info_.bus_width, 0);
  EXPECT_GT(info_.peak_bandwidth_gbs(), 100.0);
  if (info_.name.find("H200") != std::string::npos) {  // the lead's machine: PRODUCT.md's numbers
    EXPECT_EQ(info_.limits.arch_flag(), "sm_90");
    EXPECT_EQ(info_.limits.sm_count, 132);
    EXPECT_EQ(info_.limits.smem_per_block_optin, 227 * 1024);
    EXPECT_EQ(info_.limits.l2_bytes, 60 * 1024 * 1024);
  }
  std::printf("device 0: %s (%s), %s, %d SMs, %.1f GiB, driver %s, L2 %lld MiB, %.0f GB/s theoretical\n",
              info_.name.c_str(), info_.pci_bus_id.c_str(), info_.limits.arch_flag().c_str(), info_.limits.sm_count,
              static_cast<double>(info_.total_mem) / double(1 << 30), driver_version_string().c_str(),
              static_cast<long long>(info_.limits.l2_bytes >> 20), info_.peak_bandwidth_gbs());
}

TEST_F(GpuLayer, OrdinalOutOfRangeIsBadInput) {
  EXPECT_THROW((void)query_device(device_count()), InputError);
  EXPECT_THROW((void)query_device(-1), InputError);
}

TEST_F(GpuLayer, ContextIsThePrimaryContext) {
  Context a(0);
  Context b(0);  // a second retain of the same primary context, as cuDNN's runtime does
  EXPECT_NE(a.get(), nullptr);
  EXPECT_EQ(a.get(), b.get());
  Context moved(std::move(b));
  EXPECT_EQ(b.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.get(), a.get());
  const MemoryInfo mem = device_memory();
  EXPECT_GT(mem.free_bytes, 0);
  EXPECT_LE(mem.free_bytes, mem.total_bytes);
  EXPECT_LE(mem.total_bytes, info_.total_mem);
}

TEST_F(GpuLayer, BufferRoundTripOneMillionFloats) {
  Context ctx(0);
  constexpr size_t n = 1 << 20;
  const std::vector<float> host = iota_floats(n);
  DeviceBuffer a(n * sizeof(float));
  EXPECT_EQ(a.size(), n * sizeof(float));
  EXPECT_EQ(a.ptr() % 256, 0u);
  a.upload(std::span<const float>(host));
  EXPECT_EQ(a.download<float>(), host);

  DeviceBuffer b(n * sizeof(float));
  b.copy_from(a, a.size());
  EXPECT_EQ(b.download<float>(), host);

  // A NaN sentinel pattern, as the verifier fills outputs before a run.
  constexpr uint32_t kSentinel = 0x7fc0dead;
  b.fill_u32(kSentinel);
  const std::vector<uint32_t> words = b.download<uint32_t>();
  EXPECT_TRUE(std::all_of(words.begin(), words.end(), [](uint32_t w) { return w == kSentinel; }));
  b.fill_u8(0);
  const std::vector<float> zeros = b.download<float>();
  EXPECT_TRUE(std::all_of(zeros.begin(), zeros.end(), [](float f) { return f == 0.0f; }));

  // Partial copies at an offset, and range checks.
  const std::vector<float> four{1.f, 2.f, 3.f, 4.f};
  b.upload(std::span<const float>(four), n - 4);
  std::vector<float> tail(4);
  b.copy_to_host(tail.data(), 4 * sizeof(float), (n - 4) * sizeof(float));
  EXPECT_EQ(tail, four);
  EXPECT_THROW(b.upload(std::span<const float>(four), n - 3), Error);
  EXPECT_THROW(b.copy_to_host(tail.data(), 8, b.size() - 4), Error);

  DeviceBuffer moved(std::move(a));
  EXPECT_EQ(a.ptr(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.download<float>(), host);
  moved = std::move(b);  // frees moved's old allocation
  EXPECT_EQ(moved.size(), n * sizeof(float));
}

TEST_F(GpuLayer, CompileLoadLaunchAndTime) {
  Context ctx(0);
  const CompileResult c = compile_for_device();
  ASSERT_TRUE(c.ok());
  Module module(c.cubin);
  const CUfunction affine = module.function("affine");

  const FunctionInfo fi = function_info(affine);
  EXPECT_EQ(fi.binary_version, info_.limits.arch());
  const auto it = std::find_if(c.kernels.begin(), c.kernels.end(), [](const auto& k) { return k.kernel == "affine"; });
  ASSERT_NE(it, c.kernels.end());
  EXPECT_EQ(fi.registers, it->registers);  // ptxas's report matches what the driver loaded
  EXPECT_EQ(fi.max_threads_per_block, 1024);
  EXPECT_GT(max_active_blocks_per_sm(affine, 256, 0), 0);

  constexpr int n = 1 << 20;
  const std::vector<float> x = iota_floats(n);
  DeviceBuffer dx(n * sizeof(float));
  DeviceBuffer dy(n * sizeof(float));
  dx.upload(std::span<const float>(x));
  dy.fill_u32(0x7fc0dead);

  Stream stream;
  Event start;
  Event stop;
  const Dim3 grid{(n + 255) / 256, 1, 1};
  const Dim3 block{256, 1, 1};
  launch_kernel(affine, grid, block, 0, stream.get(), dy.ptr(), dx.ptr(), n);  // warm-up
  start.record(stream.get());
  constexpr int kReps = 20;
  for (int i = 0; i < kReps; ++i) launch_kernel(affine, grid, block, 0, stream.get(), dy.ptr(), dx.ptr(), n);
  stop.record(stream.get());
  const float ms = Event::elapsed_ms(start, stop);
  EXPECT_TRUE(stop.query());
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 1000.0f);
  const double gbs = 2.0 * n * sizeof(float) * kReps / (ms * 1e-3) / 1e9;
  std::printf("affine over %d floats: %.4f ms per launch, %.0f GB/s\n", n, ms / kReps, gbs);

  const std::vector<float> y = dy.download<float>(stream.get());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(y[static_cast<size_t>(i)], 2.0f * x[static_cast<size_t>(i)] + 1.0f) << "at " << i;
  }
  EXPECT_TRUE(stream.query());
}

// With a driver installed NVRTC 13 caches CUBINs in the driver's compute cache, and a hit
// prints no ptxas report; compile_cuda bypasses the cache so the figures never go missing.
TEST_F(GpuLayer, RepeatedCompilesStillReportResources) {
  for (int i = 0; i < 3; ++i) {
    const CompileResult c = compile_for_device();
    ASSERT_TRUE(c.ok());
    EXPECT_GT(c.registers, 0) << "compile " << i << " log: " << c.log;
    EXPECT_EQ(c.kernels.size(), 3u) << "compile " << i;
  }
  CompileOptions quiet;
  quiet.ptxas_verbose = false;  // the cache may answer: the CUBIN must still come back
  for (int i = 0; i < 2; ++i) {
    const CompileResult c = compile_for_device(quiet);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.cubin.substr(0, 4), std::string("\x7f" "ELF"));
  }
}

TEST_F(GpuLayer, DynamicSharedMemoryAboveDefaultNeedsOptIn) {
  constexpr int n = 25600;  // 100 KiB of floats: above the 48 KiB default, below the opt-in limit
  constexpr uint32_t smem = n * sizeof(float);
  if (info_.limits.smem_per_block_optin < smem) GTEST_SKIP() << "device opts in only " << info_.limits.smem_per_block_optin;
  Context ctx(0);
  const CompileResult c = compile_for_device();
  Module module(c.cubin);
  const CUfunction f = module.function("smem_reverse");
  const std::vector<float> x = iota_floats(n);
  DeviceBuffer dx(smem);
  DeviceBuffer dy(smem);
  dx.upload(std::span<const float>(x));

  EXPECT_THROW(launch_kernel(f, {1, 1, 1}, {512, 1, 1}, smem, nullptr, dy.ptr(), dx.ptr(), n), CudaError);
  set_max_dynamic_smem(f, static_cast<int>(smem));
  launch_kernel(f, {1, 1, 1}, {512, 1, 1}, smem, nullptr, dy.ptr(), dx.ptr(), n);
  const std::vector<float> y = dy.download<float>();
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[static_cast<size_t>(i)], x[static_cast<size_t>(n - 1 - i)]);
}

TEST_F(GpuLayer, ModuleErrorsAreClear) {
  Context ctx(0);
  const CompileResult c = compile_for_device();
  Module module(c.cubin);
  try {
    (void)module.function("no_such_kernel");
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
    EXPECT_FALSE(e.context_lost());
  }
  // A CUBIN for another major architecture does not load on this GPU.
  CompileOptions other;
  other.arch = info_.limits.cc_major == 8 ? "sm_90" : "sm_80";
  const CompileResult wrong = compile_cuda(kKernels, "gpu_layer.cu", other);
  ASSERT_TRUE(wrong.ok()) << wrong.log;
  try {
    Module m(wrong.cubin);
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.result(), CUDA_ERROR_NO_BINARY_FOR_GPU) << e.what();
  }
  // The PTX of the same program loads (the driver JIT-compiles it for this GPU).
  Module from_ptx(c.ptx);
  EXPECT_NE(from_ptx.function("affine"), nullptr);
}

TEST_F(GpuLayer, StreamAndEventRaii) {
  Context ctx(0);
  Stream a;
  const CUstream handle = a.get();
  EXPECT_NE(handle, nullptr);
  Stream b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.get(), handle);
  Stream c(CU_STREAM_NON_BLOCKING);
  c = std::move(b);  // destroys c's own stream
  EXPECT_EQ(c.get(), handle);
  c.synchronize();
  EXPECT_TRUE(c.query());

  Event e1;
  Event e2(CU_EVENT_DISABLE_TIMING);
  e1.record(c.get());
  e2.record(c.get());
  e2.synchronize();
  EXPECT_TRUE(e1.query());
  const CUevent eh = e1.get();
  Event moved(std::move(e1));
  EXPECT_EQ(e1.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(moved.get(), eh);
  EXPECT_THROW((void)Event::elapsed_ms(moved, e2), CudaError);  // e2 has timing disabled

  for (int i = 0; i < 100; ++i) {  // create/destroy churn must not leak or fail
    Stream s;
    Event e;
    e.record(s.get());
    e.synchronize();
  }
}

TEST_F(GpuLayer, ContextCanBeUsedFromAnotherThread) {
  Context ctx(0);
  std::vector<float> got;
  std::string error;
  std::thread worker([&] {
    try {
      ctx.make_current();  // contexts are current per thread
      DeviceBuffer buf(4 * sizeof(float));
      const std::vector<float> v{1.f, 2.f, 3.f, 4.f};
      buf.upload(std::span<const float>(v));
      got = buf.download<float>();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  worker.join();
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(got, (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
}

// A kernel fault poisons the context: it must surface as a CudaError that says so, which is
// what the tuner's worker relies on to exit and be replaced. Runs in a re-executed child
// process (threadsafe death test) so this process's context stays usable.
TEST_F(GpuLayer, KernelFaultIsReportedAsContextLost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string arch = info_.limits.arch_flag();
  EXPECT_EXIT(
      {
        Context ctx(0);
        CompileOptions o;
        o.arch = arch;
        const CompileResult c = compile_cuda(kKernels, "gpu_layer.cu", o);
        Module module(c.cubin);
        const CUfunction f = module.function("fault");
        launch_kernel(f, {1, 1, 1}, {1, 1, 1}, 0, nullptr, CUdeviceptr{0});
        try {
          ctx.synchronize();
        } catch (const CudaError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::_Exit(e.context_lost() ? 42 : 43);
        }
        std::_Exit(44);
      },
      ::testing::ExitedWithCode(42), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

}  // namespace
}  // namespace fusetune::gpu
