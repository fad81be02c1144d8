// The parameter array a kernel step launches with (worker/kernel_args.hpp): one pointer per
// argument in order, to the buffer's device pointer, to a zero pointer for a null argument, to
// the step's own bytes for a by-value struct; the verification redirect only for a written
// output argument. GPU-free: nothing is launched.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "codegen/variant.hpp"
#include "worker/kernel_args.hpp"

namespace {

using fusetune::codegen::KernelStep;
using fusetune::codegen::NullArg;
using fusetune::codegen::ValueArg;
using fusetune::worker::KernelLaunchArgs;

CUdeviceptr pointed(const KernelLaunchArgs& a, size_t i) {
  CUdeviceptr p = 0;
  std::memcpy(&p, a.target(i), sizeof p);
  return p;
}

// A stage kernel's shape of call: (in, null operand, geometry by value, out).
KernelStep stage_step() {
  KernelStep k;
  k.name = "ft_st_ew";
  k.args = {fusetune::codegen::BufferRef(1), NullArg{},
            ValueArg{"ft_st_ew_geom", {1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}},
            fusetune::codegen::BufferRef(2)};
  k.writes = {3};
  return k;
}

const std::vector<CUdeviceptr> kBuffers{0x1000, 0x2000, 0x3000};

TEST(KernelArgs, EachArgumentPointsToItsValueInOrder) {
  const KernelStep k = stage_step();
  KernelLaunchArgs a(k, kBuffers, 2, std::nullopt);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(pointed(a, 0), 0x2000u);
  EXPECT_EQ(pointed(a, 1), 0u);  // a null pointer, 8 bytes of zero
  // The struct's bytes themselves, not a copy: the step outlives the launch.
  EXPECT_EQ(a.target(2), static_cast<const void*>(std::get<ValueArg>(k.args[2]).bytes.data()));
  EXPECT_EQ(pointed(a, 3), 0x3000u);
  EXPECT_NE(a.params(), nullptr);
}

TEST(KernelArgs, RedirectOnlyTheWrittenOutputArgument) {
  KernelStep k = stage_step();
  k.args[0] = fusetune::codegen::BufferRef(2);  // reads the output buffer too, not written there
  KernelLaunchArgs a(k, kBuffers, 2, CUdeviceptr(0x9000));
  EXPECT_EQ(pointed(a, 0), 0x3000u);
  EXPECT_EQ(pointed(a, 3), 0x9000u);
  // Without a redirect, the output's own buffer.
  KernelLaunchArgs plain(k, kBuffers, 2, std::nullopt);
  EXPECT_EQ(pointed(plain, 3), 0x3000u);
  // A written argument that is not the output keeps its buffer.
  KernelLaunchArgs other(k, kBuffers, 1, CUdeviceptr(0x9000));
  EXPECT_EQ(pointed(other, 3), 0x3000u);
}

TEST(KernelArgs, AMoveKeepsThePointersValid) {
  const KernelStep k = stage_step();
  KernelLaunchArgs a(k, kBuffers, 2, std::nullopt);
  KernelLaunchArgs moved(std::move(a));
  EXPECT_EQ(pointed(moved, 0), 0x2000u);
  EXPECT_EQ(pointed(moved, 1), 0u);
  EXPECT_EQ(pointed(moved, 3), 0x3000u);
}

TEST(KernelArgs, BuffersOnlyStepsAreUnchanged) {
  // A chain design's kernel: every argument a buffer, the array as before (one pointer each).
  KernelStep k;
  k.args = {fusetune::codegen::BufferRef(0), fusetune::codegen::BufferRef(1), fusetune::codegen::BufferRef(0)};
  k.writes = {2};
  KernelLaunchArgs a(k, kBuffers, 0, CUdeviceptr(0x9000));
  EXPECT_EQ(pointed(a, 0), 0x1000u);
  EXPECT_EQ(pointed(a, 1), 0x2000u);
  EXPECT_EQ(pointed(a, 2), 0x9000u);
}

}  // namespace
