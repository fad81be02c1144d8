#pragma once
// The set-up every GPU test fixture shares: skip with the reason when there is no GPU, else a
// context on device 0, a stream, and the device's architecture flag for NVRTC. Base is the
// gtest class the fixture derives from (::testing::Test, or TestWithParam<T>).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"

namespace fusetune::testing {

template <class Base = ::testing::Test>
class GpuFixture : public Base {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ctx_.emplace(0);
    stream_.emplace();
    arch_ = gpu::query_device(0).limits.arch_flag();
  }

  CUstream stream() const { return stream_->get(); }

  std::optional<gpu::Context> ctx_;  // declared first: destroyed last
  std::optional<gpu::Stream> stream_;
  std::string arch_;
};

}  // namespace fusetune::testing
