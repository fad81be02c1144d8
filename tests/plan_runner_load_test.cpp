// load_variant (worker/plan_runner.hpp) takes version-2 plans: their GEMM and N-d conv steps
// need no module (MainOpSteps builds them on their first run), and their per-stage kernels
// (null and by-value arguments) load like any kernel. GPU-free: only plans without kernels
// load without a module; the kernels' loading is the GPU test's (gpu_model_plan_test, to come).
#include <gtest/gtest.h>

#include <string>

#include "codegen/generate.hpp"
#include "common/error.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "worker/plan_runner.hpp"

namespace fusetune::worker {
namespace {

codegen::Variant variant_of(const std::string& spec_text, codegen::Role role) {
  const spec::Problem p = spec::parse(spec_text);
  for (codegen::Variant& v : codegen::generate_model_variants(p, *gpu::limits_for_arch("sm_90")))
    if (v.role() == role) return v;
  ADD_FAILURE() << "no variant of role " << codegen::role_name(role) << " for " << spec_text;
  return {};
}

TEST(PlanRunnerLoad, FloorsOfGemmAndNdConvLoadWithoutAModule) {
  for (const char* spec : {"linear(m=64,k=32,n=16) | relu", "conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | relu"}) {
    const codegen::Variant v = variant_of(spec, codegen::Role::floor);
    ASSERT_FALSE(v.plan.empty()) << spec;
    const Loaded l = load_variant(v, "");
    ASSERT_EQ(l.functions.size(), v.plan.size()) << spec;
    for (CUfunction f : l.functions) EXPECT_EQ(f, nullptr) << spec;
  }
}

TEST(PlanRunnerLoad, StageKernelsAreKernelsNotRefusals) {
  // Without its module an unfused plan is refused for that, not for its arguments.
  const codegen::Variant v = variant_of("linear(m=64,k=32,n=16) | relu", codegen::Role::baseline);
  try {
    (void)load_variant(v, "");
    FAIL() << "loaded a kernel step without a module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no compiled module"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fusetune::worker
