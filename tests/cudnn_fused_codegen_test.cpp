// The `cudnn-fused` candidate without a GPU: the templates its problems get (which kernels run
// around cuDNN's graph, in which layouts), the engine configuration as variant parameters, and
// the graph step's JSON and soundness checks. What cuDNN then does with the graph is
// gpu_cudnn_fused_test.cpp's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cudnn_engine.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "plan_test_support.hpp"
#include "spec/parser.hpp"

namespace fusetune::codegen {
namespace {

using testing::buf;
using testing::kernel_name;
using testing::output_name;

std::vector<Variant> fused(const std::string& spec) {
  return testing::candidate_variants(spec::parse(spec), Candidate::cudnn_fused, gpu::DeviceLimits{});
}

// Each step, as a person reads the plan: "kernel:<name>" or "graph:<in>-><out>".
std::vector<std::string> steps(const Variant& v) {
  std::vector<std::string> out;
  for (const auto& st : v.plan) {
    if (st.kind() == StepKind::cudnn_graph)
      out.push_back("graph:" + buf(v, st.graph().in) + "->" + buf(v, st.graph().out));
    else
      out.push_back("kernel:" + kernel_name(st) + (st.timed ? "" : " (untimed)"));
  }
  return out;
}

TEST(CudnnFusedCodegen, PointwiseToNchwTransposesTheGraphsChannelsLastOutput) {
  const auto vs = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)");
  ASSERT_EQ(vs.size(), 2u);
  EXPECT_EQ(vs[0].name, "cudnn-fused.x-nchw");
  EXPECT_EQ(steps(vs[0]), (std::vector<std::string>{"kernel:ft_transform_kcrs_to_krsc (untimed)", "graph:x->y_nhwc",
                                                    "kernel:ft_to_nchw"}));
  EXPECT_EQ(vs[1].name, "cudnn-fused.x-nhwc");
  EXPECT_EQ(steps(vs[1]), (std::vector<std::string>{"kernel:ft_transform_kcrs_to_krsc (untimed)",
                                                    "kernel:ft_transform_nchw_to_nhwc", "graph:x_nhwc->y_nhwc",
                                                    "kernel:ft_to_nchw"}));
  for (const auto& v : vs) {
    EXPECT_EQ(output_name(v), "out");
    EXPECT_EQ(v.output_layout, spec::Layout::nchw);
    EXPECT_TRUE(v.plan[v.plan.size() - 2].graph().epilogue);
    EXPECT_TRUE(v.plan[v.plan.size() - 2].graph().chan.has_value());  // the conv bias and param[k]
    EXPECT_FALSE(engine_of(v).has_value()) << "a template until the GPU lists configurations";
  }
}

TEST(CudnnFusedCodegen, ChannelsLastOutputIsWrittenByTheGraphItself) {
  for (const char* spec : {"conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=any) | relu",
                           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=nhwc) | relu"}) {
    const auto vs = fused(spec);
    ASSERT_EQ(vs.size(), 2u) << spec;
    EXPECT_EQ(steps(vs[0]).back(), "graph:x->out") << spec;
    EXPECT_EQ(vs[0].output_layout, spec::Layout::nhwc) << spec;
  }
  // An NHWC input needs no transform and has one design.
  const auto in_nhwc = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3,in=nhwc,out=nhwc,bias=false) | relu");
  ASSERT_EQ(in_nhwc.size(), 1u);
  EXPECT_EQ(steps(in_nhwc[0]),
            (std::vector<std::string>{"kernel:ft_transform_kcrs_to_krsc (untimed)", "graph:x->out"}));
  EXPECT_FALSE(in_nhwc[0].plan.back().graph().chan.has_value());  // no bias, no per-channel operand
}

TEST(CudnnFusedCodegen, ReductionsEndTheGraphAndTheTailDoesMeanAndThePostOps) {
  // min: the graph's reduction is the whole answer, in (N, 1, P, Q), the same in both layouts.
  auto vs = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | mul(2) | reduce_min");
  EXPECT_EQ(steps(vs[0]).back(), "graph:x->out");
  EXPECT_EQ(vs[0].output_layout, spec::Layout::nchw);
  EXPECT_EQ(vs[0].output_buffer().floats(), 2 * 18 * 18);
  // mean: the graph sums; 1/K and the ops after the reduction are one in-place kernel.
  vs = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | tanh | reduce_mean | add(1) | sqrt");
  EXPECT_EQ(steps(vs[0]).back(), "kernel:ft_tail_kernel");
  EXPECT_EQ(vs[0].in_place_output_step(), vs[0].plan.size() - 1);
  EXPECT_NE(vs[0].source.find("return ft_post(acc / 32.0f, k, chan);"), std::string::npos);
  EXPECT_NE(vs[0].source.find("v = v + 1.0f;  // add(1)"), std::string::npos);
}

TEST(CudnnFusedCodegen, EveryTemplateIsSoundAndItsJsonRoundTrips) {
  for (const char* spec : {"conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)",
                           "conv2d(n=1,c=3,h=9,w=7,k=5,r=3,s=2,stride=2,pad=1,dilation=2) | mish | reduce_max | neg",
                           "conv2d(n=2,c=16,h=20,w=20,k=32,r=1,in=nhwc,out=any) | hardswish | rdiv(3)"}) {
    const spec::Problem p = spec::parse(spec);
    for (const auto& t : fused(spec)) {
      for (const Variant& v : {t, with_engine(t, {4, {{12, 2}}})}) {
        EXPECT_EQ(check_variant(v, p), "") << spec << " " << v.name;
        EXPECT_EQ(to_json(variant_from_json(to_json(v))), to_json(v)) << v.name;
      }
    }
  }
}

TEST(CudnnFusedCodegen, AnEngineConfigurationIsParametersAndANameSuffix) {
  const Variant t = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | relu")[1];
  const EngineKey key{7, {{2, 1}, {24, 29}}};
  const Variant v = with_engine(t, key);
  EXPECT_EQ(v.name, "cudnn-fused.x-nhwc.eng7.k2_1.k24_29");
  EXPECT_EQ(v.design, t.design);  // finalists are chosen per design, across configurations
  EXPECT_EQ(v.params.size(), t.params.size() + 3);
  EXPECT_EQ(v.params.back(), (std::pair<std::string, int64_t>{"k24", 29}));
  EXPECT_EQ(engine_of(v), key);
  EXPECT_EQ(engine_label({3, {}}), "eng3");
  // Knobs come back sorted whatever order the parameters list them in.
  Variant shuffled = t;
  shuffled.params.emplace_back("k24", 29);
  shuffled.params.emplace_back("eng", 7);
  shuffled.params.emplace_back("k2", 1);
  EXPECT_EQ(engine_of(shuffled), key);
}

TEST(CudnnFusedCodegen, AGraphStepWithTheWrongOutputShapeIsRefused) {
  const spec::Problem p = spec::parse("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | mul(2) | reduce_min");
  Variant v = fused("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | mul(2) | reduce_min")[1];
  for (auto& st : v.plan)
    if (st.kind() == StepKind::cudnn_graph) st.graph().epilogue = false;  // the graph would write K channels
  EXPECT_NE(check_variant(v, p).find("is not (N, P, Q, 32) channels-last"), std::string::npos) << check_variant(v, p);
}

}  // namespace
}  // namespace fusetune::codegen
