// GPU-free: the GPU reference's kernel sources (kernel_templates/ref_*.cu and what
// gpu_sources.cpp / render_double.cpp make of them) compile with NVRTC for sm_90, for every
// op and reduction, awkward conv shapes and both math modes (tf32: with the bound and
// variance arithmetic of ref_bounds.cuh); the rendered double math says what op_math.cpp
// says, the rendered bound steps use spec::op_info's facts. That the kernels compute the right
// numbers is gpu_reference_test's job.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/math_mode.hpp"
#include "gpu/compiler.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/gpu_sources.hpp"
#include "reference/op_math.hpp"
#include "reference/render_double.hpp"
#include "spec/ops.hpp"
#include "spec/parser.hpp"
#include "spec_builders.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

using spec_builders::conv;
using spec_builders::op;
using spec_builders::param;
using spec_builders::scalar;

spec::Problem kernelbench31() {
  spec::Problem p;
  p.conv = conv(128, 64, 128, 128, 128, 3, 3);
  p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
  p.num_params = 1;
  return p;
}

// Every elementwise op, binary ones with a per-channel operand where one is allowed.
std::vector<spec::Op> every_op(bool per_channel) {
  auto a = [&](int i) { return per_channel ? param(i) : scalar(0.25 + i); };
  return {
      op(OpKind::add, {a(0)}), op(OpKind::sub, {a(1)}), op(OpKind::rsub, {a(0)}), op(OpKind::mul, {a(1)}),
      op(OpKind::div, {a(0)}), op(OpKind::rdiv, {a(1)}), op(OpKind::min, {a(0)}), op(OpKind::max, {a(1)}),
      op(OpKind::clamp, {a(0), a(1)}), op(OpKind::relu), op(OpKind::leaky_relu, {scalar(0.2)}),
      op(OpKind::gelu), op(OpKind::gelu_tanh), op(OpKind::tanh), op(OpKind::sigmoid), op(OpKind::silu),
      op(OpKind::mish), op(OpKind::hardswish), op(OpKind::hardsigmoid), op(OpKind::hardtanh, {scalar(-2), scalar(2)}),
      op(OpKind::softplus, {scalar(2), scalar(10)}), op(OpKind::exp), op(OpKind::log), op(OpKind::abs),
      op(OpKind::neg), op(OpKind::square), op(OpKind::sqrt),
      // optional operands left out: PyTorch's defaults
      op(OpKind::leaky_relu), op(OpKind::hardtanh), op(OpKind::softplus),
      // non-finite scalars are legal in a clamp
      op(OpKind::clamp, {scalar(-std::numeric_limits<double>::infinity()), scalar(std::numeric_limits<double>::infinity())}),
  };
}

constexpr MathMode kModes[] = {MathMode::fp32, MathMode::tf32};

// The options GpuReference compiles with. A template compiled on its own (not rendered)
// includes ref_bounds.cuh from its folder, as nvcc would; rendered sources have it pasted in
// and must compile without the folder, as in GpuReference.
gpu::CompileResult compile(const std::string& source, const std::string& name, bool template_folder = false) {
  gpu::CompileOptions opt;
  opt.arch = "sm_90";
  opt.strict_fp32 = true;
  if (template_folder) opt.extra.push_back(std::string("-I") + FUSETUNE_SOURCE_DIR + "/kernel_templates");
  return gpu::compile_cuda(source, name, opt);
}

// Spills matter for the conv (its accumulators must stay in registers); an epilogue with
// thirty transcendental ops in a row may spill a word and lose nothing that matters.
void expect_compiles(const std::string& source, const std::string& name, const std::vector<std::string>& kernels,
                     bool allow_spills = false, bool template_folder = false) {
  const gpu::CompileResult r = compile(source, name, template_folder);
  ASSERT_TRUE(r.ok()) << name << ":\n" << r.log << "\n---- source ----\n" << source;
  for (const std::string& k : kernels) {
    EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), k), r.kernel_names.end()) << name << ": " << k;
  }
  if (!allow_spills) {
    EXPECT_EQ(r.spill_stores, 0) << name << " spills:\n" << r.log;
  }
  std::printf("  %-28s %7.1f ms  %3d registers\n", name.c_str(), r.compile_ms, r.registers);
}

TEST(GpuReferenceRender, EveryTemplateCompilesOnItsOwn) {
  expect_compiles(reference_template("ref_fill.cu"), "ref_fill.cu",
                  {"ft_fill_uniform", "ft_fill_u32", "ft_check_u32", "ft_spin"});
  expect_compiles(reference_template("ref_conv.cu"), "ref_conv.cu", {"ft_ref_conv"}, false, true);
  expect_compiles(reference_template("ref_epilogue.cu"), "ref_epilogue.cu", {"ft_ref_epilogue"}, false, true);
  expect_compiles(reference_template("ref_compare.cu"), "ref_compare.cu", {"ft_compare_init", "ft_compare"}, false,
                  true);
  expect_compiles(reference_template("ref_math.cu"), "ref_math.cu", {});
  expect_compiles(reference_template("ref_bounds.cuh"), "ref_bounds.cuh", {});  // host-and-device, no kernels
}

TEST(GpuReferenceRender, FillAndCompareSourcesCompile) {
  expect_compiles(reference_template("ref_fill.cu"), "ref_fill (GpuReference)",
                  {"ft_fill_uniform", "ft_fill_u32", "ft_check_u32", "ft_spin"});
  const std::string compare = render_reference_compare_source();
  expect_compiles(compare, "ref_compare (GpuReference)", {"ft_compare_init", "ft_compare"});
  EXPECT_NE(compare.find("ft_compare_element"), std::string::npos);  // the rule of ref_bounds.cuh, not a copy
}

// A version-2 problem's answers are its main operator's terms from the GPU with the stages on the
// CPU (worker/model_answer.hpp): its GpuReference compiles the fills, guards, the comparison and
// the main operator's terms (ref_main_any.cu), and they compile.
TEST(GpuReferenceRender, AVersionTwoProblemCompilesFillsTheComparisonAndTheMainTerms) {
  for (const char* text : {"linear(m=64,k=32,n=16) | relu", "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2)"}) {
    RefCompiles compiles(spec::parse(text), "sm_90", MathMode::tf32);
    std::vector<std::string> names;
    for (const RefCompiles::Compiled& c : compiles.take()) {
      names.push_back(c.name);
      EXPECT_TRUE(c.result.ok()) << text << ": " << c.name << "\n" << c.result.log;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"ref_fill.cu", "ref_main_any.cu", "ref_compare.cu"})) << text;
  }
  RefCompiles chain(spec::parse("conv2d(n=1,c=2,h=8,w=8,k=4,r=3) | relu"), "sm_90", MathMode::tf32);
  EXPECT_EQ(chain.take().size(), 4u);
}

TEST(GpuReferenceRender, UnknownTemplateThrows) { EXPECT_THROW((void)reference_template("ref_nope.cu"), std::out_of_range); }

TEST(GpuReferenceRender, ConvCompilesForAwkwardShapes) {
  std::vector<spec::Problem> problems(4);
  problems[0] = kernelbench31();
  problems[1].conv = conv(1, 1, 7, 7, 3, 3, 3);  // C=1, K=3, N=1, W=7
  problems[1].conv.stride_h = problems[1].conv.stride_w = 2;
  problems[1].conv.pad_h = problems[1].conv.pad_w = 1;
  problems[1].conv.dil_h = problems[1].conv.dil_w = 2;
  problems[2].conv = conv(3, 5, 11, 13, 17, 2, 3);  // asymmetric everything, no bias
  problems[2].conv.stride_h = 2, problems[2].conv.pad_w = 2, problems[2].conv.dil_w = 2, problems[2].conv.bias = false;
  problems[3].conv = conv(2, 7, 1, 1, 1, 1, 1);  // 1x1 image, 1x1 filter, one channel out
  for (const spec::Problem& p : problems) {
    for (MathMode math : kModes) {
      const std::string name = "ref_conv " + std::to_string(p.conv.k) + "x" + std::to_string(p.conv.c) + " " +
                               std::string(math_mode_name(math));
      const std::string src = render_reference_conv_source(p, math);
      // Both rules read the variances; fp32's V0 is its dot-product term (FT_REF_STRICT).
      expect_compiles(src, name, {"ft_ref_conv"});
      EXPECT_NE(src.find("ft_var_main(acc[kk], acc_b[kk]"), std::string::npos);
      EXPECT_NE(src.find(math == MathMode::fp32 ? "#define FT_REF_STRICT 1\n" : "#define FT_REF_STRICT 0\n"),
                std::string::npos);
    }
  }
}

TEST(GpuReferenceRender, ConvLaunchShape) {
  for (MathMode math : kModes) {
    const RefConvLaunch l = ref_conv_launch(kernelbench31(), math);
    EXPECT_EQ(l.channels_per_thread, 16);
    EXPECT_EQ(l.grid_x, 128u * ((126u * 126u + 127u) / 128u));
    EXPECT_EQ(l.grid_y, 8u);
    EXPECT_EQ(l.strict, math == MathMode::fp32);
    spec::Problem small;
    small.conv = conv(1, 1, 7, 7, 3, 3, 3);
    EXPECT_EQ(ref_conv_launch(small, math).channels_per_thread, 3);  // never wider than K
    spec::Problem huge;
    huge.conv = conv(1, 1 << 16, 1 << 9, 1 << 9, 8, 1, 1);  // one image of 2^34 elements
    EXPECT_THROW((void)ref_conv_launch(huge, math), InputError);
  }
}

// What compute() allocates per draw: 8 bytes of values per conv-output element, 4 + 4 of bound
// and variance (both rules), one set in place; a reduction's output (or the kept conv answer)
// on top. Each buffer counted in whole 2 MiB pages.
TEST(GpuReferenceRender, AnswerBytes) {
  const auto pages = [](double bytes) { return std::ceil(bytes / double(1 << 21)) * double(1 << 21); };
  spec::Problem kb31 = kernelbench31();
  const double e31 = double(kb31.conv.conv_out_elems());  // 128*128*126*126
  EXPECT_EQ(double(GpuReference::answer_bytes(kb31, false)), pages(8 * e31) + 2 * pages(4 * e31));
  EXPECT_EQ(double(GpuReference::answer_bytes(kb31, true)), 2 * (pages(8 * e31) + 2 * pages(4 * e31)));
  spec::Problem kb32;
  kb32.conv = conv(64, 64, 256, 256, 128, 3, 3);
  kb32.pre = {op(OpKind::mul, {scalar(2.0)})};
  kb32.reduce = ReduceKind::min;
  const double e32 = double(kb32.conv.conv_out_elems()), o32 = double(kb32.out_elems());
  const double whole = pages(8 * e32) + 2 * pages(4 * e32) + pages(8 * o32) + 2 * pages(4 * o32);
  EXPECT_EQ(double(GpuReference::answer_bytes(kb32, false)), whole);
  EXPECT_EQ(double(GpuReference::answer_bytes(kb32, true)), whole);  // the scratch is kept instead
  // kernelbench-32's 528 M conv outputs: 16 bytes each (+ 16/K for the reduced output).
  EXPECT_LT(double(GpuReference::answer_bytes(kb32, false)), 16.2 * e32);
}

TEST(GpuReferenceRender, EpilogueCompilesWithEveryOpAndReduction) {
  for (MathMode math : kModes) {
    const std::string mode(math_mode_name(math));
    spec::Problem p;
    p.conv = conv(2, 3, 9, 7, 5, 3, 3);
    p.num_params = 2;
    p.pre = every_op(true);
    expect_compiles(render_reference_epilogue_source(p, math), "ref_epilogue every op " + mode, {"ft_ref_epilogue"},
                    true);

    p.conv.bias = false;
    p.pre = every_op(false);
    expect_compiles(render_reference_epilogue_source(p, math), "ref_epilogue scalars, no bias " + mode,
                    {"ft_ref_epilogue"}, true);

    for (ReduceKind rk : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
      spec::Problem q;
      q.conv = conv(2, 3, 9, 7, 5, 3, 3);
      q.num_params = 1;
      q.pre = {op(OpKind::mul, {scalar(2.0)}), op(OpKind::add, {param(0)})};
      q.reduce = rk;
      q.post = every_op(false);
      expect_compiles(render_reference_epilogue_source(q, math),
                      "ref_epilogue " + std::string(spec::reduce_name(rk)) + " " + mode, {"ft_ref_epilogue"}, true);
      q.pre = every_op(true);  // every op before the reduction too, with per-channel operands
      q.num_params = 2;
      expect_compiles(render_reference_epilogue_source(q, math),
                      "ref_epilogue every op, " + std::string(spec::reduce_name(rk)) + " " + mode, {"ft_ref_epilogue"},
                      true);
    }
  }
}

// The number in a rendered literal, read back: what the GPU will compute with.
double literal_value(const std::string& expr, const std::string& prefix, const std::string& suffix) {
  EXPECT_EQ(expr.rfind(prefix, 0), 0u) << expr;
  EXPECT_TRUE(expr.ends_with(suffix)) << expr;
  std::string lit = expr.substr(prefix.size(), expr.size() - prefix.size() - suffix.size());
  if (lit.front() == '(') lit = lit.substr(1, lit.size() - 2);
  return std::strtod(lit.c_str(), nullptr);
}

TEST(GpuReferenceRender, ScalarsAreFp32RoundedAndExact) {
  spec::Problem p;
  for (double v : {0.5, 2.0, 0.1, -0.1, 1e-7, -3.0, 1e30, 123456789.0}) {
    const std::string e = render_double_op(p, op(OpKind::mul, {scalar(v)}));
    EXPECT_EQ(literal_value(e, "v * ", ""), double(float(v))) << e;  // operand_value's rounding
  }
  EXPECT_EQ(render_double_op(p, op(OpKind::mul, {scalar(2.0)})), "v * 2.0");  // a double literal, not int
  EXPECT_EQ(render_double_op(p, op(OpKind::min, {scalar(0.5)})), "ft_ref_min(v, 0.5)");
  EXPECT_EQ(render_double_op(p, op(OpKind::sub, {scalar(-0.5)})), "v - (-0.5)");
  EXPECT_EQ(render_double_op(p, op(OpKind::rdiv, {scalar(1.0)})), "1.0 / v");
  EXPECT_EQ(render_double_op(p, op(OpKind::clamp, {scalar(-std::numeric_limits<double>::infinity()), scalar(1)})),
            "ft_ref_clamp(v, (-ft_ref_inf()), 1.0)");
}

TEST(GpuReferenceRender, DefaultsAreFp32RoundedLikeOpMath) {
  spec::Problem p;
  // op_math's arg_or applies a default like a written Python float: in fp32.
  EXPECT_EQ(literal_value(render_double_op(p, op(OpKind::leaky_relu)), "ft_ref_leaky_relu(v, ", ")"),
            double(0.01f));
  // ...and whatever op_math decides, the rendering must follow: x * slope at x = -1 is -slope.
  EXPECT_EQ(literal_value(render_double_op(p, op(OpKind::leaky_relu)), "ft_ref_leaky_relu(v, ", ")"),
            -apply_op(op(OpKind::leaky_relu), -1.0, nullptr));
  EXPECT_EQ(render_double_op(p, op(OpKind::hardtanh)), "ft_ref_clamp(v, (-1.0), 1.0)");
  EXPECT_EQ(render_double_op(p, op(OpKind::softplus)), "ft_ref_softplus(v, 1.0, 20.0)");
  EXPECT_EQ(render_double_op(p, op(OpKind::softplus, {scalar(2.0)})), "ft_ref_softplus(v, 2.0, 20.0)");
}

TEST(GpuReferenceRender, PerChannelOperandsIndexChan) {
  spec::Problem p;
  p.conv.k = 8;
  p.num_params = 2;
  // chan = [bias 8][param0 8][param1 8]
  EXPECT_EQ(render_double_op(p, op(OpKind::add, {param(1)})), "v + (double)chan[16LL + k]");
  p.conv.bias = false;
  EXPECT_EQ(render_double_op(p, op(OpKind::add, {param(1)})), "v + (double)chan[8LL + k]");
}

TEST(GpuReferenceRender, EverySourceNamesTheProblemAndShape) {
  spec::Problem p = kernelbench31();
  const std::string src = render_reference_epilogue_source(p, MathMode::fp32);
  EXPECT_NE(src.find("| min(0.5) | add(param[k]) | mul(2)"), std::string::npos) << src.substr(0, 400);
  EXPECT_NE(src.find("#define FT_P 126\n"), std::string::npos);
  EXPECT_NE(src.find("#define FT_REF_REDUCE 0\n"), std::string::npos);
  EXPECT_NE(src.find("#define FT_REF_STRICT 1\n"), std::string::npos);  // fp32 reads its variances
  EXPECT_NE(src.find("ft_bound_apply(v, e, var, ft_ref_min(v, 0.5)"), std::string::npos);  // carried under fp32 too
  EXPECT_NE(src.find("ft_ref_min(v, 0.5)"), std::string::npos);
  p.pre.clear();
  p.reduce = ReduceKind::mean;
  const std::string mean = render_reference_epilogue_source(p, MathMode::fp32);
  EXPECT_NE(mean.find("return acc / 128.0;"), std::string::npos);  // reduce_finish: sum / K
  EXPECT_NE(mean.find("#define FT_REF_REDUCE 1\n"), std::string::npos);
  EXPECT_NE(mean.find("#define FT_REF_REDUCE_KIND 3\n"), std::string::npos);
}

// Under tf32 each op goes through ft_bound_apply with spec::op_info's facts as literals:
// (value, slope function, constant slope, operands, ulps, cancels), the host twin's call.
TEST(GpuReferenceRender, BoundStepsCarryTheOpTableFacts) {
  const spec::Problem p = kernelbench31();
  const std::string src = render_reference_epilogue_source(p, MathMode::tf32);
  EXPECT_NE(src.find("#define FT_REF_STRICT 0\n"), std::string::npos);
  EXPECT_NE(src.find("ft_bound_apply(v, e, var, ft_ref_min(v, 0.5), 0, 1.0, 0.5, 0.0, 0.0, 0);  // min(0.5)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("ft_bound_apply(v, e, var, v + (double)chan[128LL + k], 0, 1.0, (double)chan[128LL + k], 0.0, "
                     "2.0, 0);  // add(param[0])"),
            std::string::npos);
  EXPECT_NE(src.find("ft_bound_apply(v, e, var, v * 2.0, 1, 0.0, 2.0, 0.0, 2.0, 0);  // mul(2)"), std::string::npos);
  spec::Problem g;
  g.pre = {op(OpKind::gelu), op(OpKind::softplus), op(OpKind::exp)};
  const std::string gs = render_reference_epilogue_source(g, MathMode::tf32);
  const spec::BoundFact& gelu = spec::op_info(OpKind::gelu).bound;
  EXPECT_NE(gs.find(fmt::format("ft_bound_apply(v, e, var, ft_ref_gelu(v), 0, {}, 0.0, 0.0, {}.0, 1);  // gelu",
                                gelu.slope, gelu.ulps)),
            std::string::npos)
      << gs;
  // softplus's defaults (beta 1, threshold 20) reach the jump test as its operands.
  EXPECT_NE(gs.find("ft_bound_apply(v, e, var, ft_ref_softplus(v, 1.0, 20.0), 9, 1.0, 1.0, 20.0, 16.0, 1);"),
            std::string::npos);
  EXPECT_NE(gs.find("ft_bound_apply(v, e, var, exp(v), 4, 0.0, 0.0, 0.0, 8.0, 0);  // exp"), std::string::npos);
  // An op with an argument-growth term (xrel) passes it as the last argument.
  spec::Problem m;
  m.pre = {op(OpKind::mish)};
  const std::string ms = render_reference_epilogue_source(m, MathMode::tf32);
  EXPECT_NE(ms.find("ft_bound_apply(v, e, var, ft_ref_mish(v), 0, 1.09, 0.0, 0.0, 34.0, 0, 2.5);  // mish"),
            std::string::npos)
      << ms;
}

TEST(GpuReferenceRender, MalformedProblemsThrowInputError) {
  spec::Problem p;
  for (MathMode math : kModes) {
    p.pre = {op(OpKind::clamp, {scalar(0.0)})};  // clamp needs two operands
    EXPECT_THROW((void)render_reference_epilogue_source(p, math), InputError);
    p.pre.clear();
    p.num_params = 1;
    p.reduce = ReduceKind::sum;
    p.post = {op(OpKind::add, {param(0)})};  // per-channel after the reduction
    EXPECT_THROW((void)render_reference_epilogue_source(p, math), InputError);
    p.post.clear();
    p.conv.stride_h = 0;
    EXPECT_THROW((void)render_reference_conv_source(p, math), InputError);
    p = spec::Problem();
  }
}

}  // namespace
}  // namespace fusetune::reference
