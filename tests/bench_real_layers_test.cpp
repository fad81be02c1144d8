// bench/real_layers.txt (issue 44, item 4), GPU-free: every line is a spec fusetune reads, the
// list is what it says (four networks, three batch sizes, each layer at each), and every layer
// gets a fused-conv variant on sm_90 -- stride 2, 1 x 1, the 7 x 7 stem of 3 channels and the
// residual ones (`add(input1)`, a version-2 problem whose conv the fused conv runs as its main
// step) included -- so a bench over it measures fusetune's own kernels, not only cuDNN's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"

namespace fusetune {
namespace {

struct Layer {
  std::string spec, net;
};

std::vector<Layer> real_layers() {
  std::ifstream in(std::filesystem::path(FUSETUNE_SOURCE_DIR) / "bench" / "real_layers.txt");
  EXPECT_TRUE(in.good()) << "bench/real_layers.txt";
  std::vector<Layer> out;
  for (std::string line; std::getline(in, line);) {
    const auto hash = line.find('#');
    std::string spec = line.substr(0, hash);
    while (!spec.empty() && spec.back() == ' ') spec.pop_back();
    if (spec.empty()) continue;
    std::string net = hash == std::string::npos ? "" : line.substr(hash + 1);
    net = net.substr(net.find_first_not_of(' '));
    out.push_back({spec, net.substr(0, net.find(':'))});
  }
  return out;
}

TEST(BenchRealLayers, FourNetworksAtThreeBatchSizesEveryLayerAtEach) {
  const auto layers = real_layers();
  ASSERT_FALSE(layers.empty());
  std::map<int64_t, std::set<std::string>> by_batch;  // batch -> canonical specs, batch written as 0
  std::set<std::string> nets;
  for (const Layer& l : layers) {
    SCOPED_TRACE(l.spec);
    const spec::Problem p = spec::parse(l.spec);
    EXPECT_EQ(p.main, spec::MainKind::conv2d);
    nets.insert(l.net);
    spec::Problem at0 = p;
    at0.conv.n = 0;
    by_batch[p.conv.n].insert(spec::canonical(at0) + " # " + l.net);
  }
  EXPECT_EQ(nets, (std::set<std::string>{"resnet50", "convnext_t", "unet", "efficientnet_b0"}));
  ASSERT_EQ(by_batch.size(), 3u);
  EXPECT_TRUE(by_batch.contains(1) && by_batch.contains(32) && by_batch.contains(256));
  EXPECT_EQ(by_batch[1], by_batch[32]);
  EXPECT_EQ(by_batch[1], by_batch[256]);
}

TEST(BenchRealLayers, EveryLayerGetsTheFusedConv) {
  const gpu::DeviceLimits sm90 = *gpu::limits_for_arch("sm_90");
  size_t stride2 = 0, pointwise = 0;
  for (const Layer& l : real_layers()) {
    const spec::Problem p = spec::parse(l.spec);
    if (p.conv.n != 32) continue;  // one batch: the designs do not depend on it
    SCOPED_TRACE(l.spec);
    std::set<std::string> designs;
    for (const auto& v : codegen::generate_variants(p, sm90))
      if (v.candidate == codegen::Candidate::fused_conv) designs.insert(v.design);
    EXPECT_FALSE(designs.empty()) << "no fused-conv variant";
    stride2 += p.conv.stride_h == 2;
    pointwise += p.conv.r == 1 && p.conv.s == 1;
  }
  EXPECT_GE(stride2, 5u);
  EXPECT_GE(pointwise, 10u);
}

}  // namespace
}  // namespace fusetune
