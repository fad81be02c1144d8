// The canonical form and the problem key are stored in tuning databases: these tests
// pin them, so any change to either shows up here before it orphans stored results.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::spec {
namespace {

std::string canonical_of(const std::string& text) { return canonical(parse(text)); }
std::string key_of(const std::string& text) { return problem_key(parse(text)); }

TEST(SpecCanonical, PresetsAreGolden) {
  EXPECT_EQ(canonical_of(*preset_spec("kernelbench-31")),
            "conv2d(n=128,c=64,h=128,w=128,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw)"
            " | min(0.5) | add(param[k]) | mul(2)");
  EXPECT_EQ(canonical_of(*preset_spec("kernelbench-32")),
            "conv2d(n=64,c=64,h=256,w=256,k=128,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw)"
            " | mul(2) | reduce_min(channel)");
}

// Changing either value orphans every stored tuning result for the presets.
TEST(SpecCanonical, PresetKeysAreStable) {
  EXPECT_EQ(key_of(*preset_spec("kernelbench-31")), "ca98e8d32aaaaf30");
  EXPECT_EQ(key_of(*preset_spec("kernelbench-32")), "a73ebae46f0947b2");
}

TEST(SpecCanonical, KeyIsSixteenLowercaseHexDigits) {
  const std::string key = key_of("conv2d(n=1,c=1,h=4,w=4,k=1,r=3)");
  ASSERT_EQ(key.size(), 16u);
  for (char ch : key) EXPECT_TRUE((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')) << key;
}

TEST(SpecCanonical, NumberAndWhitespaceFormsNormalize) {
  const std::string base = "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | mul(2.0)";
  const std::vector<std::string> same = {
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | mul( 2 )",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | mul(2e0)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3)|mul(+2.)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | mul(20E-1)",
      "conv2d( k=1 ,r=3, s=3, n=01, c=1, h=4, w=4, stride=1x1, pad=0, bias=true, out=nchw )\t|\tmul(2, x)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | mul(x, 2.000)",
  };
  EXPECT_EQ(canonical_of(base),
            "conv2d(n=1,c=1,h=4,w=4,k=1,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw) | mul(2)");
  for (const std::string& text : same) {
    EXPECT_EQ(canonical_of(text), canonical_of(base)) << text;
    EXPECT_EQ(key_of(text), key_of(base)) << text;
  }
}

TEST(SpecCanonical, DefaultsArePrinted) {
  EXPECT_EQ(canonical_of("conv2d(n=2,c=3,h=9,w=8,k=4,r=3,s=1,stride=2x1,pad=1,dilation=1x2,bias=false,in=nhwc,"
                         "out=any) | leaky_relu | hardtanh | softplus(2) | relu() | reduce_sum | neg"),
            "conv2d(n=2,c=3,h=9,w=8,k=4,r=3,s=1,stride=2x1,pad=1,dilation=1x2,bias=false,in=nhwc,out=any)"
            " | leaky_relu(0.01) | hardtanh(-1,1) | softplus(2,20) | relu | reduce_sum(channel) | neg");
}

TEST(SpecCanonical, NumbersUseShortestRoundTripForm) {
  const std::string conv = "conv2d(n=1,c=1,h=4,w=4,k=1,r=3,s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw)";
  EXPECT_EQ(canonical_of(conv + " | add(0.1) | mul(1e20) | sub(1e-5) | max(-0.25) | min(123456789)"),
            conv + " | add(0.1) | mul(1e+20) | sub(1e-05) | max(-0.25) | min(123456789)");
  // Values survive the round trip bit for bit, including ones with no short decimal form.
  const Problem p = parse(conv + " | mul(0.30000000000000004) | add(3.4028234663852886e38) | sub(1e-310)");
  const Problem q = parse(canonical(p));
  for (std::size_t i = 0; i < p.pre.size(); ++i) {
    EXPECT_EQ(std::memcmp(&p.pre[i].args[0].value, &q.pre[i].args[0].value, sizeof(double)), 0) << i;
  }
}

TEST(SpecCanonical, CanonicalIsIdempotent) {
  const std::vector<std::string> specs = {
      *preset_spec("kernelbench-31"),
      *preset_spec("kernelbench-32"),
      "conv2d(n=3,c=5,h=17,w=13,k=7,r=3,s=5,pad=2x1,stride=2,dilation=1x2) | sub(2, x) | div(param[k], x) | "
      "clamp(-1, 1.5) | reduce_mean(channel) | softplus(0.5) | sqrt",
      "conv2d(n=1,c=1,h=1,w=1,k=1,r=1,out=any,in=nhwc) | gelu | gelu_tanh | mish | hardswish | hardsigmoid",
  };
  for (const std::string& text : specs) {
    const std::string once = canonical_of(text);
    EXPECT_EQ(canonical_of(once), once);
    EXPECT_EQ(key_of(once), key_of(text));
  }
}

TEST(SpecCanonical, DifferentProblemsHaveDifferentKeys) {
  const std::vector<std::string> specs = {
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3,bias=false)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3,out=nhwc)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | sub(1)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | sub(1, x)",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | reduce_min",
      "conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | reduce_max",
      "conv2d(n=2,c=1,h=4,w=4,k=1,r=3)",
  };
  std::set<std::string> keys;
  for (const std::string& text : specs) keys.insert(key_of(text));
  EXPECT_EQ(keys.size(), specs.size());
}

}  // namespace
}  // namespace fusetune::spec
