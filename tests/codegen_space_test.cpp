// Search spaces, constraints and the variants generate_variants builds from them (GPU-free).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "codegen/designs.hpp"
#include "codegen/generate.hpp"
#include "codegen/param_space.hpp"
#include "codegen_problems.hpp"
#include "plan_test_support.hpp"
#include "common/error.hpp"

namespace fusetune::codegen {
namespace {

using testing::awkward_problems;
using testing::preset31;
using testing::preset32;
using testing::arg_names;
using testing::buf;
using testing::kernel_name;
using testing::output_name;

gpu::DeviceLimits h200() { return gpu::DeviceLimits{}; }  // the defaults are sm_90's

std::vector<Variant> of_candidate(const std::vector<Variant>& all, const std::string& candidate) {
  std::vector<Variant> out;
  for (const auto& v : all) {
    if (candidate_name(v.candidate) == candidate) out.push_back(v);
  }
  return out;
}

const Variant& named(const std::vector<Variant>& all, const std::string& name) {
  for (const auto& v : all) {
    if (v.name == name) return v;
  }
  throw std::runtime_error("no variant " + name);
}

int64_t param(const Variant& v, const std::string& name) {
  for (const auto& [n, value] : v.params) {
    if (n == name) return value;
  }
  throw std::runtime_error(v.name + " has no parameter " + name);
}

bool has_param(const Variant& v, const std::string& name) {
  return std::any_of(v.params.begin(), v.params.end(), [&](const auto& p) { return p.first == name; });
}

// ---- ParamSpace ----------------------------------------------------------------------------

TEST(ParamSpace, EnumeratesInOrderAndRecordsWhyPointsWereRejected) {
  ParamSpace sp;
  sp.param("a", "a", {1, 2}).param("b", "b", {10, 20, 30}).param("fixed", "", {7});
  sp.require("a * b must not be 60", [](const ParamValues& v) { return v.at("a") * v.at("b") != 60; });
  EXPECT_EQ(sp.size(), 6u);
  std::vector<Rejection> rejected;
  const auto points = sp.enumerate(&rejected);
  ASSERT_EQ(points.size(), 5u);
  EXPECT_EQ(points.front().at("a"), 1);
  EXPECT_EQ(points.front().at("b"), 10);
  EXPECT_EQ(points.back().at("b"), 20);  // (2, 30) was rejected
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].reason, "a * b must not be 60");
  EXPECT_EQ(sp.variant_name("x.y", points[1]), "x.y.a1.b20");  // the fixed one stays out of names
  EXPECT_THROW((void)points[0].at("nope"), std::out_of_range);
  EXPECT_EQ(macro_name("tile_pq"), "FT_TILE_PQ");
}

// ---- constraints ---------------------------------------------------------------------------

TEST(Spaces, VectorWidthMustDivideTheContiguousExtent) {
  // Awkward shape: P*Q = 9 and K = 3, so nothing wider than one float fits anywhere.
  for (const auto& problem : awkward_problems()) {
    for (const auto& v : generate_variants(problem, h200())) {
      if (has_param(v, "vec")) {
        EXPECT_EQ(param(v, "vec"), 1) << v.name;
      }
      if (has_param(v, "ovec")) {
        EXPECT_EQ(param(v, "ovec"), 1) << v.name;
      }
    }
  }
  // P*Q = 126*126 is a multiple of 4 (NCHW) and K = 128 too (NHWC): 4-wide vectors exist.
  const auto all = generate_variants(preset31(), h200());
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const Variant& v) {
    return v.name.starts_with("epilogue.nchw") && param(v, "vec") == 4;
  }));
}

TEST(Spaces, PixelsNotAMultipleOfFourKeepOnlyNarrowVectorsAlongPixels) {
  spec::Problem p = preset31();
  p.conv.w = 129;  // Q = 127, P*Q = 126*127: even, not a multiple of 4
  Shape s = shape_of(p);
  ASSERT_EQ(s.pq % 2, 0);
  ASSERT_NE(s.pq % 4, 0);
  std::set<int64_t> vecs;
  for (const auto& point : pointwise_nchw_design(s, h200()).space.enumerate()) vecs.insert(point.at("vec"));
  EXPECT_EQ(vecs, (std::set<int64_t>{1, 2}));
  std::set<int64_t> ovecs;
  for (const auto& point : pointwise_nhwc_to_nchw_design(s, h200()).space.enumerate()) ovecs.insert(point.at("ovec"));
  EXPECT_EQ(ovecs, (std::set<int64_t>{1, 2}));
}

TEST(Spaces, DeviceLimitsBoundTheBlock) {
  gpu::DeviceLimits small = h200();
  small.max_threads_per_block = 256;
  small.smem_per_block = 8 * 1024;
  for (const auto& problem : {preset31(), preset32()}) {
    for (const auto& v : generate_variants(problem, small)) {
      for (const auto& step : v.plan) {
        if (step.kind() != StepKind::kernel) continue;
        EXPECT_LE(step.kernel().launch.threads(), 256u) << v.name;
      }
      if (has_param(v, "tile_pq")) {
        EXPECT_LE(4 * param(v, "tile_pq") * 33, 8 * 1024) << v.name;
      }
      if (has_param(v, "csplit")) {
        EXPECT_LE(4 * (param(v, "csplit") - 1) * param(v, "tile"), 8 * 1024) << v.name;
      }
    }
  }
  // A rejection names the device limit.
  std::vector<Rejection> rejected;
  (void)pointwise_nchw_design(shape_of(preset31()), small).space.enumerate(&rejected);
  ASSERT_FALSE(rejected.empty());
  EXPECT_NE(rejected[0].reason.find("256"), std::string::npos) << rejected[0].reason;
}

TEST(Spaces, ReduceBlocksHaveBetween64And1024Threads) {
  for (const auto& point : reduce_nchw_design(shape_of(preset32()), h200()).space.enumerate()) {
    const int64_t threads = point.at("tile") / point.at("vec") * point.at("csplit");
    EXPECT_GE(threads, 64);
    EXPECT_LE(threads, 1024);
  }
}

// ---- presets -------------------------------------------------------------------------------

TEST(Presets, EachHasBetween24And260GeneratedVariants) {
  for (const auto& problem : {preset31(), preset32()}) {
    const auto all = generate_variants(problem, h200());
    const auto epilogue = of_candidate(all, "epilogue");
    EXPECT_GE(epilogue.size(), 24u);
    EXPECT_LE(all.size(), 260u);
    EXPECT_EQ(of_candidate(all, "unfused").size(), 2u);  // eager's two conv paths
    EXPECT_EQ(of_candidate(all, "cudnn").size(), 2u);
  }
}

TEST(Presets, NamesAreUniqueAndProcedural) {
  for (const auto& problem : {preset31(), preset32()}) {
    std::set<std::string> names;
    for (const auto& v : generate_variants(problem, h200())) {
      EXPECT_TRUE(names.insert(v.name).second) << v.name;
      EXPECT_TRUE(v.name.starts_with(std::string(candidate_name(v.candidate)) + ".")) << v.name;
      EXPECT_TRUE(v.name.starts_with(v.design)) << v.name;
    }
  }
  const auto all = generate_variants(preset31(), h200());
  const Variant& v = named(all, "epilogue.nchw.b256.v4.e2");
  EXPECT_EQ(param(v, "block"), 256);
  EXPECT_EQ(param(v, "vec"), 4);
  EXPECT_EQ(param(v, "ept"), 2);
}

TEST(Presets, EveryParameterIsADefineInTheSource) {
  for (const auto& problem : {preset31(), preset32()}) {
    for (const auto& v : generate_variants(problem, h200())) {
      if (v.source.empty()) continue;
      EXPECT_NE(v.source.find("#define FT_GENERATED 1\n"), std::string::npos) << v.name;
      EXPECT_NE(v.source.find("// variant:    " + v.name + "\n"), std::string::npos) << v.name;
      for (const auto& [name, value] : v.params) {
        const std::string line = "#define " + macro_name(name) + " " + std::to_string(value) + "\n";
        EXPECT_NE(v.source.find(line), std::string::npos) << v.name << " lacks " << line;
      }
      for (const auto& step : v.plan) {
        if (step.kind() == StepKind::kernel) {
          EXPECT_NE(v.source.find(step.kernel().name), std::string::npos) << v.name;
        }
      }
    }
  }
}

TEST(Presets, ProblemTextLandsInTheHeaderComment) {
  GenerateOptions opt;
  opt.problem_text = "conv2d(n=128) | min(0.5)";
  for (const auto& v : generate_variants(preset31(), h200(), opt)) {
    if (v.source.empty()) continue;
    EXPECT_EQ(v.source.rfind("// Generated by fusetune", 0), 0u);
    EXPECT_NE(v.source.find("// problem:    conv2d(n=128) | min(0.5)\n"), std::string::npos);
  }
}

// ---- plans ---------------------------------------------------------------------------------

TEST(Plans, Preset31EpilogueNchwRunsInPlaceAfterABiaslessConv) {
  const auto all = generate_variants(preset31(), h200());
  const Variant& v = named(all, "epilogue.nchw.b256.v4.e2");
  ASSERT_EQ(v.plan.size(), 2u);
  ASSERT_EQ(v.plan[0].kind(), StepKind::cudnn_conv);
  const ConvStep& c = v.plan[0].conv();
  EXPECT_EQ(c.layout, spec::Layout::nchw);
  EXPECT_FALSE(c.bias.has_value());
  EXPECT_EQ(buf(v, c.in), "x");
  EXPECT_EQ(buf(v, c.filters), "w");
  EXPECT_EQ(buf(v, c.out), "y");
  const KernelStep& k = v.plan[1].kernel();
  EXPECT_EQ(k.name, "ft_epilogue_pointwise");
  EXPECT_EQ(arg_names(v, v.plan[1]), (std::vector<std::string>{"y", "y", "chan"}));
  EXPECT_EQ(k.writes, (std::vector<size_t>{1}));
  EXPECT_EQ(output_name(v), "y");
  EXPECT_EQ(v.output_layout, spec::Layout::nchw);
  EXPECT_EQ(v.in_place_output_step(), std::optional<size_t>(1));
  const int64_t total = 128LL * 128 * 126 * 126;
  EXPECT_EQ(k.launch.grid[0], uint32_t((total + 2047) / 2048));
  EXPECT_EQ(k.launch.block[0], 256u);
  EXPECT_DOUBLE_EQ(v.kernel_bytes, 2.0 * 4.0 * double(total));
  EXPECT_NE(v.source.find("#define FT_IN_PLACE 1"), std::string::npos);
  EXPECT_NE(v.source.find("v = v + chan[128 + k];  // add(param[0])"), std::string::npos);
  // The buffer table sizes and describes every buffer from the problem.
  const Buffer& y = v.buffer(c.out);
  EXPECT_EQ(y.kind, BufferKind::scratch);
  EXPECT_EQ(y.layout, TensorLayout::nchw);
  EXPECT_EQ(y.dims_text(), "(N, K, P, Q) = (128, 128, 126, 126)");
  EXPECT_EQ(v.buffer(c.in).kind, BufferKind::input);
  const Buffer& chan = v.buffer(k.args[2]);
  EXPECT_EQ(chan.kind, BufferKind::channels);
  EXPECT_EQ(chan.floats(), 2 * 128);
  EXPECT_EQ(chan.what, "per-channel values, K each, in this order: conv bias, param 0");
}

TEST(Plans, Preset31ChannelsLastTransposesInputAndOutput) {
  const auto all = generate_variants(preset31(), h200());
  const Variant& v = named(all, "epilogue.nhwc.t64.v4.o4.b256");
  ASSERT_EQ(v.plan.size(), 4u);
  EXPECT_EQ(kernel_name(v.plan[0]), "ft_transform_kcrs_to_krsc");
  EXPECT_FALSE(v.plan[0].timed);
  EXPECT_EQ(arg_names(v, v.plan[0]), (std::vector<std::string>{"w", "w_krsc"}));
  EXPECT_EQ(kernel_name(v.plan[1]), "ft_transform_nchw_to_nhwc");
  EXPECT_TRUE(v.plan[1].timed);
  EXPECT_EQ(arg_names(v, v.plan[1]), (std::vector<std::string>{"x", "x_nhwc"}));
  EXPECT_EQ(v.plan[1].kernel().launch.grid[0], uint32_t(128 * 1 * (128 * 128 / 32)));  // C=64 in one 64-row tile
  ASSERT_EQ(v.plan[2].kind(), StepKind::cudnn_conv);
  EXPECT_EQ(v.plan[2].conv().layout, spec::Layout::nhwc);
  EXPECT_EQ(buf(v, v.plan[2].conv().in), "x_nhwc");
  EXPECT_EQ(buf(v, v.plan[2].conv().filters), "w_krsc");
  EXPECT_EQ(kernel_name(v.plan[3]), "ft_epilogue_pointwise_nhwc");
  EXPECT_EQ(arg_names(v, v.plan[3]), (std::vector<std::string>{"y", "out", "chan"}));
  EXPECT_EQ(v.plan[3].kernel().launch.grid[0], uint32_t(128 * ((126 * 126 + 63) / 64) * 4));
  EXPECT_EQ(output_name(v), "out");
  EXPECT_EQ(v.output_layout, spec::Layout::nchw);
  EXPECT_FALSE(v.in_place_output_step().has_value());
  EXPECT_EQ(param(v, "tr_tile"), 64);
  EXPECT_EQ(param(v, "tr_vec"), 4);
}

TEST(Plans, Preset32ReducesIntoOut) {
  const auto all = generate_variants(preset32(), h200());
  const Variant& v = named(all, "epilogue.nchw.t128.v4.c4.s2");
  ASSERT_EQ(v.plan.size(), 2u);
  const KernelStep& k = v.plan[1].kernel();
  EXPECT_EQ(k.name, "ft_epilogue_reduce");
  EXPECT_EQ(arg_names(v, v.plan[1]), (std::vector<std::string>{"y", "out", "chan"}));
  EXPECT_EQ(k.launch.grid[0], uint32_t(64 * ((254 * 254 + 127) / 128)));
  EXPECT_EQ(k.launch.block[0], 32u);
  EXPECT_EQ(k.launch.block[1], 2u);
  EXPECT_EQ(output_name(v), "out");
  EXPECT_EQ(v.output_buffer().dims_text(), "(N, C, P, Q) = (64, 1, 254, 254)");
  EXPECT_NE(v.source.find("ft_min(acc, v)"), std::string::npos);
  EXPECT_NE(v.source.find("#define FT_STAGE_CHAN 1"), std::string::npos);

  const Variant& n = named(all, "epilogue.nhwc.l8.v4.c2.b256");
  EXPECT_EQ(kernel_name(n.plan.back()), "ft_epilogue_reduce_nhwc");
  EXPECT_EQ(n.plan.back().kernel().launch.grid[0], uint32_t((64 * 254 * 254 + 31) / 32));
}

TEST(Plans, UnfusedPingPongsLikeEager) {
  const auto all = generate_variants(preset31(), h200());
  // conv (no bias) | bias add | min | add(param) | mul: like eager's conv, output.add_(bias), ops.
  const Variant& v = named(all, "unfused.nchw");
  EXPECT_EQ(v.role(), Role::baseline);
  ASSERT_EQ(v.plan.size(), 5u);
  ASSERT_EQ(v.plan[0].kind(), StepKind::cudnn_conv);
  EXPECT_FALSE(v.plan[0].conv().bias.has_value());
  EXPECT_EQ(arg_names(v, v.plan[1]), (std::vector<std::string>{"y", "tmp0", "chan"}));
  EXPECT_EQ(arg_names(v, v.plan[2]), (std::vector<std::string>{"tmp0", "tmp1", "chan"}));
  EXPECT_EQ(arg_names(v, v.plan[3]), (std::vector<std::string>{"tmp1", "tmp0", "chan"}));
  EXPECT_EQ(arg_names(v, v.plan[4]), (std::vector<std::string>{"tmp0", "out", "chan"}));
  EXPECT_EQ(kernel_name(v.plan[4]), "ft_op3");
  EXPECT_EQ(output_name(v), "out");
  EXPECT_NE(v.source.find("return v + chan[k];  // the conv bias"), std::string::npos);
  EXPECT_NE(v.source.find("FT_DEFINE_UNFUSED_ELEMENTWISE(ft_op1, ft_apply_op1, FT_K, 4)"), std::string::npos);

  const auto r = generate_variants(preset32(), h200());
  const Variant& u = named(r, "unfused.nchw");
  ASSERT_EQ(u.plan.size(), 4u);
  EXPECT_EQ(kernel_name(u.plan[3]), "ft_op2");
  EXPECT_EQ(arg_names(u, u.plan[3]), (std::vector<std::string>{"tmp1", "out", "chan"}));
  EXPECT_EQ(u.plan[3].kernel().launch.grid[0], uint32_t((64 * 254 * 254 + 255) / 256));
}

// Eager's other conv path (cudnn.benchmark picks it for both presets on the H200): the input
// transposed to NHWC, cuDNN's NHWC conv, the output transposed back, then the same NCHW chain.
TEST(Plans, UnfusedAlsoRunsTheConvChannelsLastLikeEager) {
  const auto all = generate_variants(preset32(), h200());
  const Variant& v = named(all, "unfused.nhwc-conv");
  EXPECT_EQ(v.role(), Role::baseline);
  ASSERT_EQ(v.plan.size(), 7u);  // [w -> KRSC], x -> NHWC, conv, y -> NCHW, bias, mul, min
  EXPECT_EQ(kernel_name(v.plan[0]), "ft_transform_kcrs_to_krsc");
  EXPECT_FALSE(v.plan[0].timed);
  EXPECT_EQ(arg_names(v, v.plan[1]), (std::vector<std::string>{"x", "x_nhwc"}));
  EXPECT_TRUE(v.plan[1].timed);
  ASSERT_EQ(v.plan[2].kind(), StepKind::cudnn_conv);
  EXPECT_EQ(v.plan[2].conv().layout, spec::Layout::nhwc);
  EXPECT_EQ(buf(v, v.plan[2].conv().out), "y_nhwc");
  EXPECT_EQ(kernel_name(v.plan[3]), "ft_to_nchw");
  EXPECT_EQ(arg_names(v, v.plan[3]), (std::vector<std::string>{"y_nhwc", "y"}));
  EXPECT_EQ(arg_names(v, v.plan[4]), (std::vector<std::string>{"y", "tmp0", "chan"}));  // the conv bias
  EXPECT_EQ(kernel_name(v.plan[6]), "ft_op2");                                         // the channel min
  EXPECT_EQ(output_name(v), "out");
  EXPECT_EQ(v.output_layout, spec::Layout::nchw);
  EXPECT_EQ(param(v, "conv_layout"), kLayoutNhwc);
}

TEST(Plans, CudnnFloorsHaveNoBias) {
  const auto all = generate_variants(preset31(), h200());
  const Variant& nchw = named(all, "cudnn.nchw");
  EXPECT_EQ(nchw.role(), Role::floor);
  ASSERT_EQ(nchw.plan.size(), 1u);
  EXPECT_FALSE(nchw.plan[0].conv().bias.has_value());
  EXPECT_TRUE(nchw.source.empty());
  EXPECT_EQ(output_name(nchw), "y");
  const Variant& nhwc = named(all, "cudnn.nhwc");
  ASSERT_EQ(nhwc.plan.size(), 3u);
  EXPECT_FALSE(nhwc.plan[0].timed);
  EXPECT_FALSE(nhwc.plan[1].timed);
  EXPECT_EQ(nhwc.plan[2].conv().layout, spec::Layout::nhwc);
  EXPECT_EQ(nhwc.output_layout, spec::Layout::nhwc);
}

TEST(Plans, LayoutWordsSelectDesigns) {
  // NHWC input: no x transform, no NCHW-conv designs, unfused convolves in NHWC and
  // transposes its result to the NCHW output at the end.
  spec::Problem in_nhwc = preset31();
  in_nhwc.conv.in = spec::Layout::nhwc;
  const auto a = generate_variants(in_nhwc, h200());
  for (const auto& v : a) {
    EXPECT_FALSE(v.name.starts_with("epilogue.nchw")) << v.name;
    for (const auto& st : v.plan) EXPECT_NE(kernel_name(st), "ft_transform_nchw_to_nhwc") << v.name;
  }
  const Variant& u = named(a, "unfused.nhwc");
  EXPECT_EQ(u.plan[1].conv().layout, spec::Layout::nhwc);
  EXPECT_EQ(kernel_name(u.plan.back()), "ft_to_nchw");
  EXPECT_EQ(u.output_layout, spec::Layout::nchw);

  // NHWC output: the NCHW pointwise design cannot produce it; channels-last runs in place.
  spec::Problem out_nhwc = preset31();
  out_nhwc.conv.out = spec::Layout::nhwc;
  const auto b = generate_variants(out_nhwc, h200());
  for (const auto& v : b) EXPECT_FALSE(v.name.starts_with("epilogue.nchw")) << v.name;
  const Variant& e = named(b, "epilogue.nhwc.b256.v4.e2");
  EXPECT_EQ(output_name(e), "y");
  EXPECT_EQ(e.output_layout, spec::Layout::nhwc);
  EXPECT_NE(e.source.find("#define FT_LAYOUT 1"), std::string::npos);
  EXPECT_EQ(kernel_name(named(b, "unfused.nchw").plan.back()), "ft_to_nhwc");

  // No channels-last designs when switched off.
  GenerateOptions off;
  off.channels_last = false;
  for (const auto& v : generate_variants(preset31(), h200(), off)) EXPECT_EQ(v.name.find("nhwc"), std::string::npos);
}

TEST(Plans, LaunchesCoverEveryElement) {
  for (const auto& problem : awkward_problems()) {
    const Shape s = shape_of(problem);
    for (const auto& v : generate_variants(problem, h200())) {
      if (v.candidate != Candidate::epilogue) continue;
      const KernelStep& k = v.plan.back().kernel();
      const uint64_t blocks = k.launch.grid[0];
      if (k.name == "ft_epilogue_pointwise") {
        EXPECT_GE(blocks * uint64_t(param(v, "block") * param(v, "vec") * param(v, "ept")), uint64_t(s.conv_out_elems()));
      } else if (k.name == "ft_epilogue_reduce") {
        EXPECT_GE(blocks * uint64_t(param(v, "tile")), uint64_t(s.pixels()));
      } else if (k.name == "ft_epilogue_reduce_nhwc") {
        EXPECT_GE(blocks * uint64_t(param(v, "block") / param(v, "lanes")), uint64_t(s.pixels()));
      }
    }
  }
}

TEST(Generate, RejectsWhatCodegenCannotExpress) {
  spec::Problem p = preset32();
  p.post = {testing::op(spec::OpKind::add, {testing::param(0)})};
  p.num_params = 1;
  EXPECT_THROW((void)generate_variants(p, h200()), InputError);

  spec::Problem q = preset31();
  q.num_params = 0;  // add(param[0]) names a parameter that does not exist
  EXPECT_THROW((void)generate_variants(q, h200()), InputError);

  spec::Problem r = preset31();
  r.post = {testing::op(spec::OpKind::relu)};  // post-ops without a reduction
  EXPECT_THROW((void)generate_variants(r, h200()), InputError);
}

TEST(Generate, HugeBatchesSwitchTo64BitIndices) {
  spec::Problem p = preset31();
  EXPECT_FALSE(shape_of(p).index64);
  p.conv.n = 1100;  // 2.2e9 conv output elements
  EXPECT_TRUE(shape_of(p).index64);
  const auto all = generate_variants(p, h200());
  EXPECT_NE(named(all, "epilogue.nchw.b256.v4.e2").source.find("#define FT_INDEX_64 1"), std::string::npos);
}

}  // namespace
}  // namespace fusetune::codegen
