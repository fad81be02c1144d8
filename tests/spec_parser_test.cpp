// The spec language: malformed specs fail with the fault and its column; valid specs
// parse to the documented shapes, with defaults filled and operand orders resolved.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "spec/ops.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::spec {
namespace {

// A valid conv; columns of anything appended start at 32 (the " | " takes 32..34).
const std::string kConv = "conv2d(n=1,c=1,h=4,w=4,k=1,r=3)";

struct BadSpec {
  std::string text;
  std::string fault;  // substring the message must contain
  int column;
};

// Failures show the spec, not the struct's bytes.
void PrintTo(const BadSpec& bad, std::ostream* os) { *os << bad.text; }

class MalformedSpec : public ::testing::TestWithParam<BadSpec> {};

TEST_P(MalformedSpec, NamesTheFaultAndItsColumn) {
  const BadSpec& bad = GetParam();
  try {
    (void)parse(bad.text);
    FAIL() << "parsed: " << bad.text;
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(bad.fault), std::string::npos) << what;
    EXPECT_EQ(e.column(), bad.column) << what;
    EXPECT_EQ(what.rfind("spec error at column " + std::to_string(bad.column) + ": ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, MalformedSpec,
    ::testing::Values(
        BadSpec{"", "empty spec", 1},
        BadSpec{"   ", "empty spec", 4},
        BadSpec{"relu | mul(2)", "expected a main operator (conv2d, conv3d, conv_transpose2d, conv_transpose3d, linear or matmul) at the start of the spec, found 'relu'", 1},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1)", "missing required key(s) r", 27},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,n=2)", "duplicate key 'n'", 32},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,groups=2)", "groups = 2 must divide both c = 1 and k = 1", 1},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,out_pad=1)", "unknown conv2d key 'out_pad'", 32},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,strid=2)", "did you mean 'stride'?", 32},
        BadSpec{"conv2d(n=0,c=1,h=4,w=4,k=1,r=3)", "'n' must be a positive integer, found 0", 10},
        BadSpec{"conv2d(n=1.5,c=1,h=4,w=4,k=1,r=3)", "expected an integer for 'n', found '1.5'", 10},
        BadSpec{"conv2d(n=99999999999999999999,c=1,h=4,w=4,k=1,r=3)", "too large", 10},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,stride=0)", "'stride' must be a positive integer", 39},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,pad=-1)", "'pad' must be >= 0, found -1", 36},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,dilation=1x0)", "'dilation' must be a positive", 43},
        BadSpec{"conv2d(n=1,c=1,h=2,w=4,k=1,r=3)", "conv output height P is empty", 1},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,dilation=1x2)", "conv output width Q is empty", 1},
        BadSpec{"conv2d(n=1048576,c=1048576,h=4,w=4,k=1,r=3)", "input tensor has more than 2^40", 1},
        BadSpec{"conv2d(n=1,c=1048576,h=4,w=4,k=1048576,r=3)", "weight tensor has more than 2^40", 1},
        BadSpec{"conv2d(n=65536,c=1,h=1024,w=1024,k=1024,r=1)", "conv output tensor has more than 2^40", 1},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,in=any)", "expected nchw or nhwc for 'in', found 'any'", 35},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,bias=yes)", "expected true or false", 37},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3", "expected ',' or ')', found end of input", 31},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,)", "expected a conv2d key", 32},
        BadSpec{kConv + " junk", "expected '|' or end of input, found 'junk'", 33},
        BadSpec{kConv + " | relu #", "expected '|' or end of input, found '#'", 40},
        BadSpec{kConv + " |", "expected an op name after '|', found end of input", 34},
        BadSpec{kConv + " | rleu", "unknown op 'rleu'; did you mean 'relu'?", 35},
        BadSpec{kConv + " | frobnicate", "unknown op 'frobnicate' (known: add, sub,", 35},
        BadSpec{kConv + " | reduce_min(4)", "dim 4 is out of range for a value of rank 4", 46},
        BadSpec{kConv + " | reduce_min | add(param[k])", "param[k] after the channel reduction", 52},
        BadSpec{kConv + " | reduce_sum(c)", "expected 'channel'", 46},
        BadSpec{kConv + " | mul(param[c])", "expected 'k'", 45},
        BadSpec{kConv + " | clamp(1)", "'clamp' takes 2 arguments (lo, hi), found 1", 42},
        BadSpec{kConv + " | relu(1)", "'relu' takes no arguments, found 1", 40},
        BadSpec{kConv + " | mul(1,2)", "'mul' takes 1 argument, found 2", 41},
        BadSpec{kConv + " | hardtanh(1)", "'hardtanh' takes 0 or 2 arguments", 45},
        BadSpec{kConv + " | clamp(2,1)", "'clamp' needs lo <= hi, found lo=2 hi=1", 41},
        BadSpec{kConv + " | clamp(param[k],1)", "'clamp' takes scalar arguments", 41},
        BadSpec{kConv + " | softplus(0)", "beta > 0", 44},
        BadSpec{kConv + " | mul(1e39)", "outside the fp32 range", 39},
        BadSpec{kConv + " | mul(1e999)", "out of range", 39},
        BadSpec{kConv + " | mul(x,x)", "takes one operand and one x", 35},
        BadSpec{kConv + " | relu(x)", "'relu' does not take 'x'", 40},
        BadSpec{kConv + " | mul(y)", "unknown name 'y': name a value first with '| as y'", 39},
        BadSpec{kConv + " | mul(-)", "expected a number, param[k], a name or x, found '-'", 39},
        // Non-ASCII: named as a character (UTF-8 decoded) or, not UTF-8, as a byte; columns count bytes.
        BadSpec{kConv + " | \xff", "byte 0xFF (not UTF-8)", 35},
        BadSpec{kConv + " | r\xc3\xa9lu",
                "non-ASCII character '\xc3\xa9' (U+00E9); op names and keys are lowercase ASCII", 36},
        BadSpec{kConv + " | r\xe9lu", "byte 0xE9 (not UTF-8)", 36},
        BadSpec{kConv + " | relu\xe2\x80\x8b", "non-ASCII character U+200B;", 39},
        BadSpec{kConv + " |\xc2\xa0relu", "non-ASCII character U+00A0;", 34},
        BadSpec{"conv2d(n=1,c=1,h=4,w=4,k=1,r=3,\xc2\x9b" "31m)", "non-ASCII character U+009B;", 32},
        BadSpec{"conv2d(n=\xef\xbc\x91,c=1,h=4,w=4,k=1,r=3)", "non-ASCII character '\xef\xbc\x91' (U+FF11)", 10},
        BadSpec{kConv + " | mul(2) | r\xc3\xa9lu | junk(", "U+00E9", 45}));

// A non-ASCII character that would not show, or would act on a terminal, is named by its code
// point alone: the message carries no byte of it.
TEST(SpecParser, InvisibleAndControlCharactersAreNotEchoed) {
  for (const std::string bad : {"\xe2\x80\xae", "\xc2\x9b", "\xe2\x80\x8b", "\xef\xbb\xbf", "\xc2\x85"}) {
    try {
      (void)parse(kConv + " | re" + bad + "lu");
      FAIL() << "parsed";
    } catch (const SpecError& e) {
      const std::string what = e.what();
      for (const char c : what) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << what;
      EXPECT_NE(what.find("non-ASCII character U+"), std::string::npos) << what;
    }
  }
}

// --- presets -----------------------------------------------------------------

TEST(SpecParser, KernelBench31HasTheDocumentedShape) {
  const Problem p = parse(*preset_spec("kernelbench-31"));
  const Conv& c = p.conv;
  EXPECT_EQ(c.n, 128);
  EXPECT_EQ(c.c, 64);
  EXPECT_EQ(c.h, 128);
  EXPECT_EQ(c.w, 128);
  EXPECT_EQ(c.k, 128);
  EXPECT_EQ(c.r, 3);
  EXPECT_EQ(c.s, 3);
  EXPECT_EQ(c.p(), 126);
  EXPECT_EQ(c.q(), 126);
  EXPECT_TRUE(c.bias);
  EXPECT_FALSE(p.reduce.has_value());
  ASSERT_EQ(p.pre.size(), 3u);
  EXPECT_EQ(p.pre[0].kind, OpKind::min);
  EXPECT_EQ(p.pre[0].args[0].value, 0.5);
  EXPECT_EQ(p.pre[1].kind, OpKind::add);
  EXPECT_TRUE(p.pre[1].args[0].per_channel);
  EXPECT_EQ(p.pre[1].args[0].param_index, 0);
  EXPECT_EQ(p.pre[2].kind, OpKind::mul);
  EXPECT_EQ(p.pre[2].args[0].value, 2.0);
  EXPECT_EQ(p.num_params, 1);
  EXPECT_EQ(p.out_elems(), int64_t{128} * 128 * 126 * 126);
}

TEST(SpecParser, KernelBench32HasTheDocumentedShape) {
  const Problem p = parse(*preset_spec("kernelbench-32"));
  EXPECT_EQ(p.conv.n, 64);
  EXPECT_EQ(p.conv.h, 256);
  EXPECT_EQ(p.conv.p(), 254);
  EXPECT_EQ(p.conv.q(), 254);
  ASSERT_EQ(p.pre.size(), 1u);
  EXPECT_EQ(p.pre[0].kind, OpKind::mul);
  EXPECT_EQ(p.reduce, ReduceKind::min);
  EXPECT_TRUE(p.post.empty());
  EXPECT_EQ(p.num_params, 0);
  EXPECT_EQ(p.out_channels(), 1);
  EXPECT_EQ(p.out_elems(), int64_t{64} * 254 * 254);
}

TEST(SpecParser, PresetNamesAndResolve) {
  EXPECT_EQ(preset_names(), (std::vector<std::string>{"kernelbench-31", "kernelbench-32"}));
  EXPECT_FALSE(preset_spec("kernelbench-33").has_value());
  EXPECT_EQ(resolve_problem(std::nullopt, "kernelbench-32").conv.h, 256);
  EXPECT_EQ(resolve_problem(kConv + " | relu", std::nullopt).pre.size(), 1u);
}

TEST(SpecParser, ResolveRejectsBadChoices) {
  const auto message = [](const std::optional<std::string>& spec, const std::optional<std::string>& preset) {
    try {
      (void)resolve_problem(spec, preset);
    } catch (const InputError& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(std::nullopt, "kb31"), "unknown preset 'kb31' (known: kernelbench-31, kernelbench-32)");
  EXPECT_EQ(message(kConv, "kernelbench-31"), "give a SPEC or --preset NAME, not both");
  EXPECT_NE(message(std::nullopt, std::nullopt).find("give a SPEC or --preset NAME"), std::string::npos);
  EXPECT_NE(message("conv2d(", std::nullopt).find("spec error at column 8"), std::string::npos);
}

TEST(SpecParser, SpecErrorIsAnInputError) {
  try {
    (void)parse("nonsense");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
}

// --- ops ---------------------------------------------------------------------

// One spec with every op (minimal arguments) before and after a reduction.
std::string every_op_spec() {
  std::string pre, post;
  for (const OpInfo& info : all_ops()) {
    std::string stage = " | " + std::string(info.name);
    if (info.min_args == 1) stage += "(0.25)";
    if (info.min_args == 2) stage += "(-0.5,1.5)";
    pre += stage;
    post += stage;
  }
  return kConv + pre + " | reduce_mean(channel)" + post;
}

TEST(SpecParser, EveryOpParsesAndRoundTrips) {
  const Problem p = parse(every_op_spec());
  ASSERT_EQ(p.pre.size(), all_ops().size());
  ASSERT_EQ(p.post.size(), all_ops().size());
  for (std::size_t i = 0; i < all_ops().size(); ++i) {
    EXPECT_EQ(p.pre[i].kind, all_ops()[i].kind);
    EXPECT_EQ(p.post[i].kind, all_ops()[i].kind);
    // Defaults are filled, so every op carries its full argument list.
    EXPECT_EQ(p.pre[i].args.size(), static_cast<std::size_t>(all_ops()[i].max_args));
  }
  const std::string text = canonical(p);
  EXPECT_EQ(canonical(parse(text)), text);
}

TEST(SpecParser, EveryReductionParses) {
  for (ReduceKind kind : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
    const std::string name(reduce_name(kind));
    for (const std::string& stage : {name, name + "()", name + "(channel)", name + " ( channel ) "}) {
      const Problem p = parse(kConv + " | " + stage);
      EXPECT_EQ(p.reduce, kind) << stage;
      EXPECT_EQ(canonical(p), kConv.substr(0, kConv.size() - 1) +
                                  ",s=3,stride=1,pad=0,dilation=1,bias=true,in=nchw,out=nchw) | " + name +
                                  "(channel)");
    }
  }
}

TEST(SpecParser, OpTableLookups) {
  for (const OpInfo& info : all_ops()) {
    EXPECT_EQ(op_from_name(info.name), info.kind);
    EXPECT_EQ(op_info(info.kind).name, info.name);
    EXPECT_EQ(info.defaults.empty() ? info.min_args : static_cast<int>(info.defaults.size()), info.max_args);
  }
  EXPECT_FALSE(op_from_name("reduce_min").has_value());
  EXPECT_EQ(reduce_from_name("reduce_sum"), ReduceKind::sum);
  EXPECT_EQ(reduce_name(ReduceKind::mean), "reduce_mean");
  EXPECT_EQ(layout_name(Layout::any), "any");
  EXPECT_EQ(layout_from_name("nhwc"), Layout::nhwc);
}

TEST(SpecParser, EmptyParensAreOptional) {
  EXPECT_EQ(canonical(parse(kConv + " | relu")), canonical(parse(kConv + " | relu ( )")));
  EXPECT_EQ(parse(kConv + " | relu()").pre.at(0).kind, OpKind::relu);
}

TEST(SpecParser, OperandOrderForms) {
  const auto stage = [](const std::string& op) {
    const std::string text = canonical(parse(kConv + " | " + op));
    return text.substr(text.find(" | ") + 3);
  };
  EXPECT_EQ(stage("sub(1.5, x)"), "rsub(1.5)");
  EXPECT_EQ(stage("div(1.5,x)"), "rdiv(1.5)");
  EXPECT_EQ(stage("sub(x, 1.5)"), "sub(1.5)");
  EXPECT_EQ(stage("div(x,1.5)"), "div(1.5)");
  EXPECT_EQ(stage("add(2,x)"), "add(2)");
  EXPECT_EQ(stage("mul(2,x)"), "mul(2)");
  EXPECT_EQ(stage("min(2,x)"), "min(2)");
  EXPECT_EQ(stage("max(x,2)"), "max(2)");
  EXPECT_EQ(stage("sub(param[k], x)"), "rsub(param[k])");
  EXPECT_EQ(stage("rsub(3)"), "rsub(3)");
  EXPECT_EQ(stage("rdiv(param[k])"), "rdiv(param[k])");
  const Problem p = parse(kConv + " | sub(1.5, x)");
  EXPECT_EQ(p.pre.at(0).kind, OpKind::rsub);
  EXPECT_EQ(p.pre.at(0).args.at(0).value, 1.5);
}

TEST(SpecParser, ParamsAreNumberedInOrderOfAppearance) {
  const Problem p = parse(kConv + " | add(param[k]) | mul(2) | div(param[ k ], x) | reduce_max | add(1)");
  EXPECT_EQ(p.num_params, 2);
  EXPECT_EQ(p.pre.at(0).args.at(0).param_index, 0);
  EXPECT_EQ(p.pre.at(2).kind, OpKind::rdiv);
  EXPECT_EQ(p.pre.at(2).args.at(0).param_index, 1);
  EXPECT_EQ(p.pre.at(1).args.at(0).param_index, -1);
  EXPECT_EQ(p.post.size(), 1u);
}

TEST(SpecParser, OpDefaultsAreFilled) {
  const Problem p = parse(kConv + " | leaky_relu | hardtanh | softplus | softplus(2) | leaky_relu(0.2)");
  const auto values = [&](std::size_t i) {
    std::vector<double> out;
    for (const Operand& a : p.pre.at(i).args) out.push_back(a.value);
    return out;
  };
  EXPECT_EQ(values(0), (std::vector<double>{0.01}));
  EXPECT_EQ(values(1), (std::vector<double>{-1.0, 1.0}));
  EXPECT_EQ(values(2), (std::vector<double>{1.0, 20.0}));
  EXPECT_EQ(values(3), (std::vector<double>{2.0, 20.0}));
  EXPECT_EQ(values(4), (std::vector<double>{0.2}));
}

// --- conv keys ----------------------------------------------------------------

TEST(SpecParser, ConvDefaults) {
  const Conv c = parse("conv2d(k=8,r=5,w=9,h=7,c=2,n=3)").conv;  // any key order
  EXPECT_EQ(c.n, 3);
  EXPECT_EQ(c.c, 2);
  EXPECT_EQ(c.h, 7);
  EXPECT_EQ(c.w, 9);
  EXPECT_EQ(c.k, 8);
  EXPECT_EQ(c.r, 5);
  EXPECT_EQ(c.s, 5);  // s defaults to r
  EXPECT_EQ(c.stride_h, 1);
  EXPECT_EQ(c.stride_w, 1);
  EXPECT_EQ(c.pad_h, 0);
  EXPECT_EQ(c.pad_w, 0);
  EXPECT_EQ(c.dil_h, 1);
  EXPECT_EQ(c.dil_w, 1);
  EXPECT_TRUE(c.bias);
  EXPECT_EQ(c.in, Layout::nchw);
  EXPECT_EQ(c.out, Layout::nchw);
  EXPECT_EQ(parse("conv2d(n=1,c=1,h=7,w=7,k=1,r=3,s=1)").conv.s, 1);
}

TEST(SpecParser, PairsAreHeightByWidth) {
  const Conv c = parse("conv2d(n=1,c=1,h=9,w=9,k=1,r=3,stride=2x1,pad = 1 x 0,dilation=3)").conv;
  EXPECT_EQ(c.stride_h, 2);
  EXPECT_EQ(c.stride_w, 1);
  EXPECT_EQ(c.pad_h, 1);
  EXPECT_EQ(c.pad_w, 0);
  EXPECT_EQ(c.dil_h, 3);
  EXPECT_EQ(c.dil_w, 3);
  EXPECT_EQ(c.p(), (9 + 2 - 3 * 2 - 1) / 2 + 1);
  EXPECT_EQ(c.q(), 9 - 3 * 2);
}

TEST(SpecParser, LayoutsAndBias) {
  const Conv a = parse("conv2d(n=1,c=1,h=4,w=4,k=1,r=3,in=nhwc,out=any,bias=false)").conv;
  EXPECT_EQ(a.in, Layout::nhwc);
  EXPECT_EQ(a.out, Layout::any);
  EXPECT_FALSE(a.bias);
  const Conv b = parse("conv2d(n=1,c=1,h=4,w=4,k=1,r=3,in=nchw,out=nhwc,bias=true)").conv;
  EXPECT_EQ(b.in, Layout::nchw);
  EXPECT_EQ(b.out, Layout::nhwc);
  EXPECT_TRUE(b.bias);
}

TEST(SpecParser, WhitespaceAndNumberForms) {
  const Problem p = parse(" \tconv2d ( n = 1 , c=1,h=4,w=4,k=1,r=+3 ) |mul(-.5)|add( 5. )|max(1E+2)|min(+2.5e-3) ");
  EXPECT_EQ(p.conv.r, 3);
  ASSERT_EQ(p.pre.size(), 4u);
  EXPECT_EQ(p.pre[0].args[0].value, -0.5);
  EXPECT_EQ(p.pre[1].args[0].value, 5.0);
  EXPECT_EQ(p.pre[2].args[0].value, 100.0);
  EXPECT_EQ(p.pre[3].args[0].value, 2.5e-3);
}

TEST(SpecParser, LargestTensorIsAccepted) {
  // Exactly 2^40 input elements is allowed; one more batch is not.
  EXPECT_NO_THROW(parse("conv2d(n=1048576,c=1,h=1024,w=1024,k=1,r=1)"));
  EXPECT_THROW(parse("conv2d(n=1048577,c=1,h=1024,w=1024,k=1,r=1)"), SpecError);
}

TEST(SpecParser, OverlongSpecIsRejected) {
  EXPECT_THROW(parse(std::string(kMaxSpecLength + 1, ' ')), SpecError);
}

}  // namespace
}  // namespace fusetune::spec
