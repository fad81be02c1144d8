// cuDNN's runtime fusion as the `cudnn-fused` candidate, on the GPU: the graph fusetune builds
// from a spec must compute the problem (verified against the float64 reference like any
// variant) for the patterns users write, every engine configuration must end as a recorded
// status, and a stored configuration must build again in a fresh worker without the heuristics.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>

#include "codegen/cudnn_engine.hpp"
#include "gpu/driver_api.hpp"
#include "spec/parser.hpp"
#include "tune/tuner.hpp"

namespace {

using fusetune::codegen::Candidate;
using fusetune::protocol::Status;
using fusetune::tune::TuneReport;

class GpuCudnnFused : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  }
  static fusetune::tune::TuneOptions options(int engines) {
    fusetune::tune::TuneOptions o;
    o.worker_exe = FUSETUNE_BINARY;
    o.max_variants = engines;
    o.quick = true;
    o.retime_rounds = 3;
    o.floors = false;
    return o;
  }
  // The cudnn-fused results of a tune, printed (the test log is where their statuses are read).
  static std::map<std::string, const fusetune::protocol::VariantResult*> fused(const TuneReport& r) {
    std::map<std::string, const fusetune::protocol::VariantResult*> out;
    for (const auto& v : r.results) {
      if (v.variant.candidate != Candidate::cudnn_fused) continue;
      out[v.variant.name] = &v;
      std::cout << "  " << v.variant.name << ": " << fusetune::protocol::status_name(v.status);
      if (v.timed) std::cout << " " << v.time.median_ms << " ms";
      if (!v.reason.empty()) std::cout << " - " << std::string_view(v.reason).substr(0, 160);
      std::cout << "\n";
    }
    return out;
  }
};

// The patterns of the presets and of users' epilogues, on shapes cuDNN's fused engines take
// (C, K multiples of 8): at least one configuration verifies for each, in each input layout
// cuDNN accepts; every configuration ends ok, not_supported or wrong_result, with a reason.
TEST_F(GpuCudnnFused, TheGraphComputesTheProblem) {
  for (const char* spec : {
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | mul(2) | reduce_min",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=nhwc) | relu",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,pad=1,in=nhwc,out=nhwc) | gelu | mul(param[k])",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | add(param[k]) | reduce_max | sigmoid",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,bias=false) | tanh | reduce_mean | add(1)",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=any) | silu | sub(0.25) | rsub(1) | clamp(-1,1)",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=any) | mish | hardswish | leaky_relu(0.1)",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=any) | hardsigmoid | square | sqrt | exp | log | abs | neg",
           "conv2d(n=2,c=16,h=20,w=20,k=32,r=3,out=any) | softplus | gelu_tanh | div(2) | rdiv(3) | max(param[k])",
       }) {
    SCOPED_TRACE(spec);
    std::cout << spec << "\n";
    const TuneReport r = fusetune::tune::run_tune(fusetune::spec::parse(spec), options(4));
    const auto f = fused(r);
    ASSERT_FALSE(f.empty());
    int ok = 0;
    for (const auto& [name, v] : f) {
      EXPECT_TRUE(v->status == fusetune::protocol::Status::ok || v->status == fusetune::protocol::Status::not_supported || v->status == fusetune::protocol::Status::wrong_result)
          << name << ": " << fusetune::protocol::status_name(v->status) << " " << v->reason;
      if (v->status != fusetune::protocol::Status::ok) {
        EXPECT_FALSE(v->reason.empty()) << name;
      }
      ok += v->status == fusetune::protocol::Status::ok;
    }
    EXPECT_GE(ok, 1) << "no cuDNN configuration computed " << spec;
  }
}

// A stored configuration (what smoke re-runs from the database) is built again from its engine
// index and knobs in a fresh worker, and verifies again.
TEST_F(GpuCudnnFused, AStoredConfigurationBuildsAgainInAFreshWorker) {
  const char* spec = "conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | mul(2) | reduce_min";
  const TuneReport first = fusetune::tune::run_tune(fusetune::spec::parse(spec), options(2));
  const fusetune::protocol::VariantResult* stored = nullptr;
  for (const auto& [name, v] : fused(first))
    if (v->status == fusetune::protocol::Status::ok) stored = v;
  ASSERT_NE(stored, nullptr);
  ASSERT_TRUE(fusetune::codegen::engine_of(stored->variant).has_value());
  auto o = options(2);
  o.injected = {*stored};
  o.on_device = [](const nlohmann::json&) {
    fusetune::tune::TuneDecision d;
    d.only = {"(baselines only)"};
    return d;
  };
  const TuneReport again = fusetune::tune::run_tune(fusetune::spec::parse(spec), o);
  const auto f = fused(again);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.begin()->first, stored->variant.name);
  EXPECT_EQ(f.begin()->second->status, fusetune::protocol::Status::ok) << f.begin()->second->reason;
}

}  // namespace
