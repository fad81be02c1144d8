// GPU-free: the driver layer on a machine without a driver (this repo's CI) must fail
// cleanly with exit code 3 and one line; on a GPU machine the same tests check the happy path.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "common/error.hpp"
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

bool libcuda_loadable() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr;  // left open: the driver layer keeps it loaded anyway
}

TEST(Driver, ProbeAgreesWithDriver) {
  std::string why;
  const bool available = driver_available(&why);
  if (available) {
    EXPECT_TRUE(why.empty());
    EXPECT_NO_THROW((void)driver());
    EXPECT_GT(device_count(), 0);
    EXPECT_FALSE(driver_version_string().empty());
    EXPECT_NE(driver_if_loaded(), nullptr);
    return;
  }
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  if (!libcuda_loadable()) {
    EXPECT_NE(why.find("libcuda"), std::string::npos) << why;
    EXPECT_NE(why.find("no NVIDIA driver found"), std::string::npos) << why;
  }
  EXPECT_EQ(driver_if_loaded(), nullptr);
  try {
    (void)driver();
    FAIL() << "driver() must throw without a driver";
  } catch (const NoGpuError& e) {
    EXPECT_EQ(e.code(), ExitCode::no_gpu);
    EXPECT_EQ(std::string(e.what()), why);  // the same one line, every time
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

// Every entry point that needs the GPU says "no GPU" (exit 3), never crashes.
TEST(Driver, GpuEntryPointsThrowNoGpuWithoutDriver) {
  if (driver_available()) GTEST_SKIP() << "a driver is present: covered by gpu_layer_test";
  EXPECT_THROW((void)device_count(), NoGpuError);
  EXPECT_THROW((void)query_device(0), NoGpuError);
  EXPECT_THROW((void)driver_version_string(), NoGpuError);
  EXPECT_THROW(Context ctx(0), NoGpuError);
  EXPECT_THROW(Stream s, NoGpuError);
  EXPECT_THROW(Event e, NoGpuError);
  EXPECT_THROW(DeviceBuffer b(16), NoGpuError);
  EXPECT_THROW(Module m(std::string("\x7f" "ELF")), NoGpuError);
}

TEST(Driver, EmptyHandlesNeedNoDriver) {
  DeviceBuffer empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.ptr(), 0u);
  DeviceBuffer zero(0);  // cuMemAlloc rejects 0 bytes; an empty buffer never calls it
  EXPECT_TRUE(zero.empty());
  DeviceBuffer moved(std::move(zero));
  EXPECT_TRUE(moved.empty());
}

TEST(CudaCheck, MacroThrowsCudaErrorWithCallText) {
  auto fails = [] { return CUDA_ERROR_ILLEGAL_ADDRESS; };
  try {
    FT_CU_CALL(fails());
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), ExitCode::failure);
    EXPECT_EQ(e.result(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_TRUE(e.context_lost());
    EXPECT_NE(what.find("driver_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("fails()"), std::string::npos) << what;
    // The error's name comes from the driver when it is loaded, else its number.
    const std::string expected = driver_if_loaded() != nullptr ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUresult 700";
    EXPECT_NE(what.find(expected), std::string::npos) << what;
  }
}

TEST(CudaCheck, NoexceptTwinReportsAndDoesNotThrow) {
  auto fails = [] { return CUDA_ERROR_INVALID_VALUE; };
  testing::internal::CaptureStderr();
  auto call = [&]() noexcept { FT_CU_CALL_NOEXCEPT(fails()); };
  call();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("fails()"), std::string::npos) << err;
  EXPECT_NE(err.find("warning"), std::string::npos) << err;
  testing::internal::CaptureStderr();
  auto ok = [] { return CUDA_SUCCESS; };
  FT_CU_CALL_NOEXCEPT(ok());
  FT_CU_CALL(ok());
  EXPECT_TRUE(testing::internal::GetCapturedStderr().empty());
}

TEST(CudaCheck, StickyErrorsAreTheFaultKinds) {
  for (CUresult r : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_LAUNCH_FAILED,
                     CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_ASSERT}) {
    EXPECT_TRUE(is_sticky_error(r)) << r;
  }
  for (CUresult r : {CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_FOUND,
                     CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_NOT_READY}) {
    EXPECT_FALSE(is_sticky_error(r)) << r;
  }
}

TEST(DriverApi, HandlesAreMoveOnly) {
  static_assert(!std::is_copy_constructible_v<Context> && std::is_nothrow_move_constructible_v<Context>);
  static_assert(!std::is_copy_constructible_v<Module> && std::is_nothrow_move_constructible_v<Module>);
  static_assert(!std::is_copy_constructible_v<Stream> && std::is_nothrow_move_constructible_v<Stream>);
  static_assert(!std::is_copy_constructible_v<Event> && std::is_nothrow_move_constructible_v<Event>);
  static_assert(!std::is_copy_constructible_v<DeviceBuffer> &&
                std::is_nothrow_move_constructible_v<DeviceBuffer>);
  static_assert(!std::is_copy_assignable_v<DeviceBuffer> && std::is_nothrow_move_assignable_v<DeviceBuffer>);
  static_assert(std::is_nothrow_destructible_v<DeviceBuffer> && std::is_nothrow_destructible_v<Context>);
  SUCCEED();
}

TEST(DeviceInfo, PeakBandwidthFromAttributes) {
  DeviceInfo info;
  info.mem_clock_khz = 2619000;  // H100 SXM's reported HBM3 clock
  info.bus_width = 5120;
  EXPECT_NEAR(info.peak_bandwidth_gbs(), 3352.3, 0.1);
}

}  // namespace
}  // namespace fusetune::gpu
