// Version 2's verification draws put half the output channels' biases on the epilogue's
// thresholds from draw 1 on (reference::place_model_biases, issue 41 item 1), as the conv2d
// chains' draws do: a kernel that gets a branch wrong (relu's kink, a clamp's corner) is caught
// only by outputs near it. GPU-free: the main operator's float64 output (model_reference.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "reference/model_data.hpp"
#include "reference/model_reference.hpp"
#include "spec/parser.hpp"
#include "worker/model_inputs.hpp"

namespace fusetune::worker {
namespace {

// Channels (dim 1 of the main output) whose outputs lie on both sides of one of ts, each side
// holding at least a tenth of them: the channels the draw made straddle a threshold.
int64_t straddling_channels(const spec::Problem& p, const reference::ModelData& d, const std::vector<double>& ts) {
  const std::vector<double> y = reference::main_output(p, d);
  const std::vector<int64_t> shape = p.main_shape();
  const int64_t channels = shape[1];
  int64_t inner = 1;
  for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
  std::vector<bool> straddles(size_t(channels), false);
  for (double t : ts) {
    std::vector<int64_t> above(size_t(channels), 0), all(size_t(channels), 0);
    for (size_t i = 0; i < y.size(); ++i) {
      const int64_t ch = int64_t(i) / inner % channels;
      above[size_t(ch)] += y[i] > t ? 1 : 0;
      all[size_t(ch)] += 1;
    }
    for (int64_t ch = 0; ch < channels; ++ch) {
      const double share = double(above[size_t(ch)]) / double(all[size_t(ch)]);
      if (share >= 0.1 && share <= 0.9) straddles[size_t(ch)] = true;
    }
  }
  return int64_t(std::count(straddles.begin(), straddles.end(), true));
}

struct Case {
  const char* spec;
  std::vector<double> thresholds;  // of the main output, where the epilogue changes branch
};

// KernelBench #9's chain at four rows (relu((y - 2) 1.5) at nn.Linear's scale is 0 almost
// everywhere without the placement), a transposed conv (its channel sums scaled by the stride's
// share of taps), a grouped conv3d, and a general-form epilogue whose leading ops are mapped back.
TEST(ModelThresholds, HalfTheChannelsStraddleTheEpiloguesThresholdFromDrawOneOn) {
  const Case cases[] = {
      {"linear(m=64,k=8192,n=64) | sub(2) | mul(1.5) | relu", {2.0}},
      {"conv_transpose2d(n=2,c=8,h=8,w=8,k=16,r=4,stride=2,pad=1) | sub(1) | relu", {1.0}},
      {"conv3d(n=2,c=8,d=4,h=6,w=6,k=16,r=3,groups=2) | clamp(-0.25,0.75)", {-0.25, 0.75}},
      {"linear(m=64,k=1024,n=32) | add(0.5) | relu | group_norm(4)", {-0.5}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const spec::Problem p = spec::parse(c.spec);
    const int64_t channels = p.channels();
    // Draw 0 as drawn: at most a stray channel near a threshold away from 0.
    const int64_t before = straddling_channels(p, model_verification_draw(p, 7, 0), c.thresholds);
    for (int d = 1; d < 3; ++d) {
      SCOPED_TRACE("draw " + std::to_string(d));
      const reference::ModelData data = model_verification_draw(p, 7, d);
      const int64_t n = straddling_channels(p, data, c.thresholds);
      std::printf("%s draw %d: %lld of %lld channels straddle a threshold (draw 0: %lld)\n", c.spec, d,
                  (long long)n, (long long)channels, (long long)before);
      EXPECT_GE(n, channels * 2 / 5);
      EXPECT_NE(model_verification_draw(p, 7, d).bias, reference::draw_model_data(p, 7 + uint64_t(d)).bias);
    }
    if (c.thresholds[0] == 2.0) {
      EXPECT_EQ(before, 0);
    }
  }
}

// Nothing to place: a matmul has no bias, an epilogue without thresholds has nothing to place
// them on, and what follows a norm is not mapped back; the draw is then the plain one.
TEST(ModelThresholds, NoBiasOrNoThresholdLeavesTheDrawAsDrawn) {
  for (const char* text : {"matmul(m=16,k=32,n=8) | relu", "linear(m=16,k=32,n=8) | mul(2) | tanh",
                           "linear(m=16,k=32,n=8) | group_norm(2) | relu"}) {
    SCOPED_TRACE(text);
    const spec::Problem p = spec::parse(text);
    for (int d = 1; d < 3; ++d) {
      reference::ModelData plain = reference::draw_model_data(p, 5 + uint64_t(d));
      EXPECT_EQ(model_verification_draw(p, 5, d).bias, plain.bias);
    }
  }
}

}  // namespace
}  // namespace fusetune::worker
