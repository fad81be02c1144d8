// The worker's choice between whole answers and verification sliced by images
// (worker/verify_memory.hpp), without a GPU: a problem past 2^31 conv outputs is verified sliced
// on an 80 GB card instead of refused, a small one keeps whole answers, the test knob forces
// slices, and a problem whose inputs alone do not fit is still refused.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/image_slices.hpp"
#include "spec/parser.hpp"
#include "worker/input_draws.hpp"
#include "worker/verify_memory.hpp"

namespace fusetune::worker {
namespace {

constexpr double kH100Free = 79e9;
constexpr int kDraws = 3;

double answer(const spec::Problem& p, int64_t images) {
  return double(reference::GpuReference::answer_bytes(reference::slice_problem(p, images), true));
}

TEST(VerifyMemory, SmallProblemsKeepWholeAnswers) {
  const spec::Problem p =
      spec::parse("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)");  // kernelbench-31
  const VerifyMemory m = plan_verify_memory(p, kDraws, kH100Free);
  EXPECT_EQ(m.slice_images, 0);
  EXPECT_DOUBLE_EQ(m.need, fixed_bytes(p, kDraws) + kDraws * answer(p, p.conv.n));
}

// 520*64*256*256 = 2.18e9 conv outputs (the conv output and, without a reduction, the problem's
// output pass 2^31 elements): whole answers take ~70 GB a draw (both rules keep the same arrays).
TEST(VerifyMemory, PastTwoToTheThirtyOneOutputsIsSlicedNotRefused) {
  for (const char* spec : {"conv2d(n=520,c=8,h=256,w=256,k=64,r=3,pad=1) | relu",
                           "conv2d(n=520,c=8,h=256,w=256,k=64,r=3,pad=1) | reduce_max(channel)"}) {
    SCOPED_TRACE(spec);
    const spec::Problem p = spec::parse(spec);
    ASSERT_GT(p.conv.conv_out_elems(), int64_t(1) << 31);
    const VerifyMemory m = plan_verify_memory(p, kDraws, kH100Free);
    ASSERT_GE(m.slice_images, 1);
    EXPECT_LT(m.slice_images, p.conv.n);
    EXPECT_LE(m.need, kUsableShare * kH100Free);
    // The largest slice within its share.
    const double budget = kSliceShare * (kUsableShare * kH100Free - fixed_bytes(p, kDraws));
    EXPECT_LE(answer(p, m.slice_images), budget);
    EXPECT_GT(answer(p, m.slice_images + 1), budget);
  }
}

TEST(VerifyMemory, TheTestKnobForcesSlices) {
  const spec::Problem p = spec::parse("conv2d(n=8,c=8,h=16,w=16,k=16,r=3) | relu");
  const VerifyMemory m = plan_verify_memory(p, kDraws, kH100Free, 3);
  EXPECT_EQ(m.slice_images, 3);
  EXPECT_TRUE(m.forced);
  EXPECT_FALSE(plan_verify_memory(p, kDraws, kH100Free).forced);
  EXPECT_EQ(plan_verify_memory(p, kDraws, kH100Free, 100).slice_images, 8);
  // Not for a problem that mixes images: whole answers, as without the knob.
  spec::Problem conv3d = p;
  conv3d.main = spec::MainKind::conv3d;
  EXPECT_EQ(plan_verify_memory(conv3d, kDraws, kH100Free, 3).slice_images, 0);
}

TEST(VerifyMemory, InputsThatDoNotFitAreStillRefused) {
  // 4 conv-output scratch buffers alone: 4 * 4 B * 1024*64*512*512 = 275 GB.
  const spec::Problem p = spec::parse("conv2d(n=1024,c=8,h=512,w=512,k=64,r=3,pad=1) | relu");
  try {
    (void)plan_verify_memory(p, kDraws, kH100Free);
    FAIL() << "expected a refusal";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("of device memory for verification"), std::string::npos) << e.what();
  }
  // A version-2 problem whose images cannot be checked apart (batch statistics) is refused where
  // its whole answers do not fit; with its images kept apart, its answers cover a block of images
  // per draw (model_inputs.hpp) and it fits.
  EXPECT_THROW((void)plan_verify_memory(spec::parse("conv3d(n=260,c=8,d=2,h=256,w=256,k=64,t=1,r=3,s=3,pad=0) | "
                                                    "batch_norm"),
                                        kDraws, kH100Free),
               InputError);
  EXPECT_NO_THROW((void)plan_verify_memory(spec::parse("conv3d(n=260,c=8,d=2,h=256,w=256,k=64,t=1,r=3,s=3,pad=0) | "
                                                       "group_norm(8)"),
                                           kDraws, kH100Free));
}

// A version-2 problem keeps whole answers (from the CPU reference), never sliced, and is refused
// where even those do not fit.
TEST(VerifyMemory, VersionTwoProblemsKeepWholeAnswersOrAreRefused) {
  const spec::Problem p = spec::parse("conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | group_norm(2) | add(input1)");
  const VerifyMemory m = plan_verify_memory(p, kDraws, kH100Free, 1);
  EXPECT_EQ(m.slice_images, 0);
  EXPECT_FALSE(m.forced);
  EXPECT_GT(m.need, kDraws * InputDraws::input_bytes(p));
  EXPECT_THROW((void)plan_verify_memory(p, kDraws, m.need / 2), InputError);
}

}  // namespace
}  // namespace fusetune::worker
