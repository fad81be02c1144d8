// The spec language, version 2: every main operator and every general-form stage parses to the
// documented problem and shape, prints a canonical text that parses back to itself, and the
// spellings of one problem share one key; version 1 specs keep their texts and keys; faults
// name their column. The grammar is docs/spec-language.md's.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"
#include "spec/support.hpp"

namespace fusetune::spec {
namespace {

Shape shape_of(const std::string& text) { return out_shape(parse(text)); }

// canonical(parse(t)) parses to the same canonical text (the round trip every stored key needs).
std::string round_trip(const std::string& text) {
  const std::string once = canonical(parse(text));
  EXPECT_EQ(canonical(parse(once)), once) << text;
  return once;
}

TEST(SpecV2, MainOperatorsHaveTheirShapesAndDefaults) {
  const Problem c3 = parse("conv3d(n=2,c=3,d=8,h=16,w=16,k=4,r=3)");
  EXPECT_EQ(c3.main, MainKind::conv3d);
  EXPECT_EQ(c3.conv.t, 3);  // t and s default to r
  EXPECT_EQ(c3.conv.s, 3);
  EXPECT_EQ(c3.main_shape(), (Shape{2, 4, 6, 14, 14}));
  // PyTorch's ConvTranspose2d: (H-1)*stride - 2*pad + dilation*(R-1) + out_pad + 1.
  const Problem t2 = parse("conv_transpose2d(n=1,c=4,h=32,w=16,k=8,r=4,stride=2,pad=1,out_pad=1,groups=2)");
  EXPECT_EQ(t2.main_shape(), (Shape{1, 8, 65, 33}));
  EXPECT_EQ(t2.conv.weight_elems(), 4 * (8 / 2) * 4 * 4);  // (C, K/g, R, S)
  const Problem t3 = parse("conv_transpose3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3,stride=2,pad=1,out_pad=1)");
  EXPECT_EQ(t3.main_shape(), (Shape{16, 64, 32, 64, 64}));
  EXPECT_EQ(parse("conv3d(n=1,c=1,d=5,h=5,w=5,k=1,r=3,stride=2x1x1)").main_shape(), (Shape{1, 1, 2, 3, 3}));
  const Problem lin = parse("linear(m=128,k=1024,n=512)");
  EXPECT_TRUE(lin.gemm.bias);  // nn.Linear's default
  EXPECT_EQ(lin.main_shape(), (Shape{128, 512}));
  EXPECT_DOUBLE_EQ(lin.gemm.flops(), 2.0 * 128 * 1024 * 512);
  const Problem mm = parse("matmul(batch=4,m=8,k=16,n=32,trans_b=true)");
  EXPECT_FALSE(mm.gemm.bias);
  EXPECT_TRUE(mm.gemm.trans_b);
  EXPECT_EQ(mm.main_shape(), (Shape{4, 8, 32}));
  EXPECT_EQ(parse("matmul(m=8,k=16,n=32)").main_shape(), (Shape{8, 32}));
}

TEST(SpecV2, CanonicalTextsWriteEveryKey) {
  EXPECT_EQ(round_trip("linear(k=64,n=32,m=16) | relu"), "linear(m=16,k=64,n=32,bias=true) | relu");
  EXPECT_EQ(round_trip("conv_transpose2d(n=1,c=2,h=3,w=3,k=2,r=3,stride=2x1)"),
            "conv_transpose2d(n=1,c=2,h=3,w=3,k=2,r=3,s=3,stride=2x1,pad=0,out_pad=0,dilation=1,groups=1,bias=true,"
            "in=nchw,out=nchw)");
  EXPECT_EQ(round_trip("conv3d(n=1,c=2,d=4,h=4,w=4,k=2,r=3,t=1,pad=0x1x1)"),
            "conv3d(n=1,c=2,d=4,h=4,w=4,k=2,t=1,r=3,s=3,stride=1,pad=0x1x1,dilation=1,groups=1,bias=true,in=nchw,"
            "out=nchw)");
  EXPECT_EQ(round_trip("matmul(m=2,k=3,n=4)"), "matmul(batch=1,m=2,k=3,n=4,trans_a=false,trans_b=false)");
}

TEST(SpecV2, Version1SpecsKeepTheirCanonicalTextsAndKeys) {
  // Pinned in tests/spec_canonical_test.cpp too; here the point is that version 2's parser gives
  // version 1's problems the chain form and no groups key.
  const Problem p = parse("conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)");
  EXPECT_TRUE(p.is_conv2d_chain());
  EXPECT_TRUE(p.stages.empty());
  EXPECT_EQ(p.pre.size(), 3u);
  EXPECT_EQ(problem_key(p), "ca98e8d32aaaaf30");
  // A K = 1 conv's channel reduction is kept (version 1 kept it), though it reduces one channel.
  const Problem k1 = parse("conv2d(n=1,c=1,h=4,w=4,k=1,r=3) | reduce_min");
  ASSERT_TRUE(k1.reduce.has_value());
  // groups is printed for conv2d only when it is not 1.
  EXPECT_EQ(canonical(parse("conv2d(n=1,c=4,h=4,w=4,k=4,r=3,groups=1)")),
            canonical(parse("conv2d(n=1,c=4,h=4,w=4,k=4,r=3)")));
  EXPECT_NE(canonical(parse("conv2d(n=1,c=4,h=4,w=4,k=4,r=3,groups=2)")).find(",groups=2,"), std::string::npos);
}

TEST(SpecV2, ChainEpiloguesOfAnyMainOperatorTakeTheChainForm) {
  const Problem p = parse("linear(m=8,k=4,n=16) | mul(2) | add(param[k]) | reduce_sum(1) | mul(1.5)");
  EXPECT_TRUE(p.stages.empty());
  EXPECT_EQ(p.pre.size(), 2u);
  ASSERT_TRUE(p.reduce.has_value());
  EXPECT_EQ(*p.reduce, ReduceKind::sum);
  EXPECT_EQ(p.post.size(), 1u);
  EXPECT_EQ(p.num_params, 1);
  EXPECT_EQ(out_shape(p), (Shape{8, 1}));
  EXPECT_EQ(canonical(p), "linear(m=8,k=4,n=16,bias=true) | mul(2) | add(param[k]) | reduce_sum(channel) | mul(1.5)");
  EXPECT_FALSE(p.is_conv2d_chain());  // no candidate takes linear yet
}

TEST(SpecV2, NamedValuesAreRenamedInOrderSoSpellingsShareAKey) {
  const std::string a = canonical(parse("linear(m=4,k=3,n=5) | as first | sigmoid | mul(first)"));
  const std::string b = canonical(parse("linear(m=4,k=3,n=5) | as y | sigmoid | mul(y)"));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, "linear(m=4,k=3,n=5,bias=true) | as v0 | sigmoid | mul(v0)");
  // A name never used changes nothing: the chain form, and the key of the spec without it.
  EXPECT_EQ(problem_key(parse("linear(m=4,k=3,n=5) | as unused | relu")), problem_key(parse("linear(m=4,k=3,n=5) | relu")));
  // A residual to the main output, used three times (KernelBench 20).
  const Problem r = parse("conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | as x0 | "
                          "add(param[k]) | add(x0) | mul(x0) | add(x0)");
  EXPECT_EQ(r.num_values, 1);
  ASSERT_EQ(r.stages.size(), 5u);
  EXPECT_EQ(r.stages[0].kind, StageKind::name);
  EXPECT_EQ(r.stages[2].op.args[0].value_index, 0);
  EXPECT_EQ(r.param_shapes.at(0), (Shape{1, 2, 1, 1, 1}));
}

TEST(SpecV2, ReductionsFollowKeepdimAndDropSizeOneDims) {
  EXPECT_EQ(shape_of("conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | reduce_mean(2,3)"), (Shape{2, 4, 1, 1}));
  EXPECT_EQ(shape_of("conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | reduce_mean(spatial,keepdim=false)"), (Shape{2, 4}));
  EXPECT_EQ(shape_of("conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | reduce_sum(all,keepdim=false)"), (Shape{}));
  EXPECT_EQ(shape_of("conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | reduce_max(-3)"), (Shape{2, 4, 1, 6, 6}));
  // KernelBench 18: after a sum over features, max/mean/logsumexp over the size-1 dim are the
  // identity and drop out, leaving a chain.
  const Problem p = parse("linear(m=16,k=8,n=32) | reduce_sum(1) | reduce_max(1) | reduce_mean(1) | logsumexp(1) | "
                          "logsumexp(1)");
  EXPECT_TRUE(p.stages.empty());
  EXPECT_EQ(canonical(p), "linear(m=16,k=8,n=32,bias=true) | reduce_sum(channel)");
  // adaptive_avg_pool*d(1) is the mean over the last dims, keepdim.
  EXPECT_EQ(canonical(parse("conv2d(n=1,c=1,h=4,w=4,k=2,r=3) | adaptive_avg_pool2d(1) | relu")),
            canonical(parse("conv2d(n=1,c=1,h=4,w=4,k=2,r=3) | reduce_mean(2,3) | relu")));
}

TEST(SpecV2, PoolingNormsSoftmaxHaveTheirShapesAndParameters) {
  EXPECT_EQ(shape_of("conv2d(n=1,c=1,h=9,w=9,k=2,r=2) | max_pool2d(2)"), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(shape_of("conv2d(n=1,c=1,h=9,w=9,k=2,r=2) | avg_pool2d(kernel=3,stride=2,pad=1)"), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(shape_of("conv3d(n=1,c=1,d=8,h=8,w=8,k=2,r=1) | max_pool3d(kernel=2x2x1)"), (Shape{1, 2, 4, 4, 8}));
  EXPECT_EQ(shape_of("linear(m=128,k=8,n=64) | max_pool1d(2)"), (Shape{128, 32}));  // the last dim
  const Problem n = parse("conv2d(n=2,c=1,h=6,w=6,k=8,r=3) | group_norm(4) | instance_norm | batch_norm(affine=false) | "
                          "layer_norm(2,eps=1e-6) | softmax(1) | log_softmax(-1)");
  ASSERT_EQ(n.stages.size(), 6u);
  EXPECT_EQ(n.stages[0].groups, 4);
  EXPECT_TRUE(n.stages[0].affine);
  EXPECT_FALSE(n.stages[1].affine);  // InstanceNorm's default
  EXPECT_EQ(n.stages[3].eps, 1e-6);
  // group_norm's weight and bias per channel, layer_norm's over its last two dims.
  ASSERT_EQ(n.param_shapes.size(), 4u);
  EXPECT_EQ(n.param_shapes[0], (Shape{1, 8, 1, 1}));
  EXPECT_EQ(n.param_shapes[2], (Shape{1, 1, 4, 4}));
  EXPECT_EQ(n.stages[4].dims, std::vector<int>{1});
  EXPECT_EQ(n.stages[5].dims, std::vector<int>{3});
}

TEST(SpecV2, InputsAndLearnedScalars) {
  const Problem p = parse("matmul(batch=2,m=3,k=4,n=5) | add(input1) | mul(input1) | reduce_sum(2) | add(param[1])");
  ASSERT_EQ(p.input_shapes.size(), 1u);
  EXPECT_EQ(p.input_shapes[0], (Shape{2, 3, 5}));
  EXPECT_EQ(p.param_shapes.at(0), (Shape{1, 1, 1}));
  EXPECT_EQ(canonical(p), "matmul(batch=2,m=3,k=4,n=5,trans_a=false,trans_b=false) | add(input1) | mul(input1) | "
                          "reduce_sum(2) | add(param[1])");
  // Inputs are numbered in order of first use, so input2 used alone is input1.
  EXPECT_EQ(canonical(parse("linear(m=2,k=2,n=2) | add(input2)")), "linear(m=2,k=2,n=2,bias=true) | add(input1)");
  // A learned scalar is allowed after a channel reduction, param[k] is not (one channel is left).
  EXPECT_NO_THROW(parse("conv2d(n=1,c=1,h=4,w=4,k=4,r=3) | reduce_sum | add(param[1])"));
}

// Every family of version 2 is tunable channels-first (generate_model_variants plans it);
// channels-last version-2 problems are refused with the reason.
TEST(SpecV2, TuneTakesEveryFamilyChannelsFirst) {
  for (const char* text : {"conv2d(n=1,c=4,h=8,w=8,k=4,r=3) | relu", "linear(m=4,k=4,n=4) | relu",
                           "matmul(batch=2,m=3,k=4,n=5) | softmax(2)", "conv3d(n=1,c=1,d=4,h=4,w=4,k=1,r=3)",
                           "conv_transpose2d(n=1,c=2,h=4,w=4,k=2,r=3,stride=2)",
                           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3) | relu",
                           "conv2d(n=1,c=4,h=8,w=8,k=4,r=3,groups=2)", "conv2d(n=1,c=4,h=8,w=8,k=4,r=3) | max_pool2d(2)"}) {
    EXPECT_FALSE(why_not_tunable(parse(text)).has_value()) << text << ": " << why_not_tunable(parse(text)).value_or("");
    EXPECT_NO_THROW(require_tunable(parse(text))) << text;
  }
  for (const char* text : {"conv3d(n=1,c=1,d=4,h=4,w=4,k=1,r=3,in=nhwc)",
                           "conv2d(n=1,c=4,h=8,w=8,k=4,r=3,groups=2,out=nhwc)"}) {
    const auto why = why_not_tunable(parse(text));
    ASSERT_TRUE(why.has_value()) << text;
    EXPECT_NE(why->find("no candidates for channels-last"), std::string::npos) << *why;
    EXPECT_THROW(require_tunable(parse(text)), InputError) << text;
  }
}

struct BadV2 {
  std::string text;
  std::string fault;
  int column;
};
void PrintTo(const BadV2& bad, std::ostream* os) { *os << bad.text; }
class MalformedV2 : public ::testing::TestWithParam<BadV2> {};

TEST_P(MalformedV2, NamesTheFaultAndItsColumn) {
  const BadV2& bad = GetParam();
  try {
    (void)parse(bad.text);
    FAIL() << "accepted: " << bad.text;
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.fault), std::string::npos) << e.what();
    EXPECT_EQ(e.column(), bad.column) << e.what();
  }
}

const std::string kLin = "linear(m=4,k=3,n=6)";  // anything appended starts at column 20

INSTANTIATE_TEST_SUITE_P(
    Table, MalformedV2,
    ::testing::Values(
        BadV2{"conv3d(n=1,c=1,h=4,w=4,k=1,r=3)", "conv3d is missing required key(s) d", 31},
        BadV2{"linear(m=4,k=3)", "linear is missing required key(s) n", 15},
        BadV2{"linear(m=4,k=3,n=6,r=3)", "unknown linear key 'r'", 20},
        BadV2{"conv_transpose2d(n=1,c=1,h=4,w=4,k=1,r=3,stride=2,out_pad=2)", "out_pad 2 must be below stride", 1},
        BadV2{"conv3d(n=1,c=1,d=4,h=4,w=4,k=1,r=3,stride=2x1)", "'stride' takes one value or 3 joined by 'x'", 46},
        BadV2{kLin + " | mul(a)", "unknown name 'a'", 27},
        BadV2{kLin + " | as relu", "'relu' is a reserved word", 26},
        BadV2{kLin + " | as a | relu | as a", "the name 'a' is already used", 40},
        BadV2{kLin + " | relu(a)", "unknown name 'a'", 28},
        BadV2{kLin + " | relu(1)", "'relu' takes no arguments", 28},
        BadV2{kLin + " | as a | clamp(a, 1)", "'clamp' takes scalar arguments", 36},
        BadV2{kLin + " | add(input0)", "extra inputs are input1 to input16", 27},
        BadV2{kLin + " | reduce_sum(2)", "dim 2 is out of range for a value of rank 2", 34},
        BadV2{kLin + " | reduce_sum(spatial)", "'spatial' is dims 2 and on", 34},
        BadV2{kLin + " | softmax", "softmax takes one dim", 23},
        BadV2{kLin + " | logsumexp", "logsumexp needs the dims", 23},
        BadV2{kLin + " | max_pool2d(2)", "2-D pooling needs a value of rank 3 or more", 23},
        BadV2{kLin + " | max_pool1d(8)", "the window 8 exceeds dim 1", 23},
        BadV2{kLin + " | max_pool1d(kernel=2,pad=2)", "pad 2 must be at most half the window 2", 23},
        BadV2{kLin + " | max_pool1d(stride=2)", "max_pool1d needs its kernel size", 23},
        BadV2{kLin + " | max_pool1d(2,ceil_mode=true)", "unknown key 'ceil_mode' for max_pool1d", 36},
        BadV2{kLin + " | adaptive_avg_pool1d(2)", "takes the output size 1", 23},
        BadV2{kLin + " | group_norm(4)", "groups = 4 must divide the 6 channels", 23},
        BadV2{kLin + " | group_norm", "group_norm needs groups", 23},
        BadV2{kLin + " | instance_norm", "instance_norm needs rank 3 or more", 23},
        BadV2{kLin + " | layer_norm(3)", "layer_norm over the last 3 dims", 23},
        BadV2{kLin + " | batch_norm(eps=0)", "batch_norm needs eps > 0", 38},
        BadV2{kLin + " | dropout(0.5)", "dropout is random in training mode", 23},
        BadV2{"matmul(m=4,k=3,n=6) | add(input1) | reduce_sum(1,keepdim=false) | add(param[k])",
              "param[k] needs a value of rank 2 or more", 71},
        BadV2{kLin + " | reduce_sum(1) | add(param[k])", "param[k] after the channel reduction", 43}));

}  // namespace
}  // namespace fusetune::spec
