// How cuDNN's conv options are narrowed and in which order they are verified
// (src/tune/conv_screen.hpp): only the chosen option feeds the plans, so verification runs
// fastest first and stops at the first that passes; it must never skip a faster option that
// was timed, nor pick one cuDNN refused.
#include <gtest/gtest.h>

#include <limits>

#include "worker/conv_screen.hpp"

namespace fusetune::worker {
namespace {

constexpr double kRefused = std::numeric_limits<double>::infinity();

TEST(ConvScreen, KeepsOptionsWithinTheFactorOfTheFastestInTheirOrder) {
  EXPECT_EQ(within_factor({2.0, 1.0, 1.5, 1.51, kRefused, 160.0}, 1.5), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(within_factor({2.0, 1.0, 1.5, kRefused}, 3.0), (std::vector<size_t>{0, 1, 2}));
  EXPECT_TRUE(within_factor({kRefused, kRefused}, 1.5).empty());
  EXPECT_TRUE(within_factor({}, 1.5).empty());
}

TEST(ConvScreen, VerifiesTimedOptionsFastestFirstThenTheScreenedOut) {
  // Options 0-5: 2 and 4 were timed (4 faster), 3 was refused, 0, 1 and 5 screened out.
  const std::vector<double> screen{9.0, 3.0, 1.2, kRefused, 1.0, 2.5};
  const std::vector<std::optional<double>> medians{std::nullopt, std::nullopt, 1.10, std::nullopt, 0.95, std::nullopt};
  EXPECT_EQ(verification_order(screen, medians), (std::vector<size_t>{4, 2, 5, 1, 0}));
}

TEST(ConvScreen, AMedianDecidesOverAFasterScreeningRun) {
  // One screening run can catch boost clocks; the timed rounds' median orders the options.
  const std::vector<double> screen{0.8, 1.0};
  EXPECT_EQ(verification_order(screen, {1.2, 1.0}), (std::vector<size_t>{1, 0}));
}

TEST(ConvScreen, NothingToVerifyWhenCudnnRefusedEverything) {
  EXPECT_TRUE(verification_order({kRefused, kRefused}, {std::nullopt, std::nullopt}).empty());
}

}  // namespace
}  // namespace fusetune::worker
