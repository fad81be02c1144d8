// cuDNN graphs for conv3d and the transposed convs (worker/conv_nd_graph.hpp) on the GPU: every
// engine configuration cuDNN offers (at most 16 per case) that builds must compute the problem,
// checked element by element against the float64 reference (reference/model_main.hpp) on seeded
// fp32 inputs: strict fp32 within 1e-5 of sum |terms| (+ |bias|), TF32 within the TF32 rule's
// bound (reference/bounds.hpp). The output is NaN-poisoned before each run and a guard band after
// it must stay untouched. A graph or configuration cuDNN refuses is printed with cuDNN's reason,
// never a crash. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "conv_nd_test_support.hpp"
#include "gpu/context.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"
#include "reference/bounds.hpp"
#include "reference/model_main.hpp"
#include "worker/conv_nd_graph.hpp"
#include "worker/conv_nd_shape.hpp"

namespace {

using fusetune::MathMode;
using fusetune::spec::Conv;
using fusetune::spec::Layout;
using fusetune::spec::MainKind;
using fusetune::worker::ConvNdDesc;
using fusetune::worker::ConvNdGraph;
using fusetune::worker::GraphEngine;
using fusetune::worker::GraphRefused;

constexpr uint32_t kSentinel = 0x7fc0dead;  // a quiet NaN no computation produces
constexpr size_t kGuardFloats = 1024;
constexpr size_t kMostConfigs = 16;

struct Case {
  std::string name;
  MainKind kind;
  Conv conv;
  Layout layout;
  bool bias;
  MathMode math;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<std::pair<std::string, std::pair<MainKind, Conv>>> shapes;
  {
    Conv c;
    c.n = 2, c.c = 4, c.d = 6, c.h = 7, c.w = 5, c.k = 6, c.t = 3, c.r = 3, c.s = 3;
    c.stride_d = 2, c.pad_d = 1, c.pad_h = 2, c.pad_w = 1, c.dil_h = 2, c.groups = 2;
    shapes.push_back({"conv3d_s211_pad_dil_g2", {MainKind::conv3d, c}});
  }
  {
    Conv c;
    c.n = 2, c.c = 4, c.h = 5, c.w = 6, c.k = 6, c.r = 3, c.s = 3, c.transposed = true;
    c.stride_h = c.stride_w = 2, c.pad_h = c.pad_w = 1, c.out_pad_h = c.out_pad_w = 1, c.groups = 2;
    shapes.push_back({"conv_transpose2d_s2_p1_op1_g2", {MainKind::conv_transpose2d, c}});
  }
  {
    Conv c;
    c.n = 2, c.c = 3, c.d = 3, c.h = 4, c.w = 5, c.k = 5, c.t = 3, c.r = 3, c.s = 3, c.transposed = true;
    c.stride_d = c.stride_h = c.stride_w = 2, c.pad_d = c.pad_h = c.pad_w = 1;
    c.out_pad_d = c.out_pad_h = c.out_pad_w = 1;
    shapes.push_back({"conv_transpose3d_s2_p1_op1", {MainKind::conv_transpose3d, c}});
  }
  std::vector<Case> out;
  for (const auto& [name, shape] : shapes)
    for (Layout layout : {Layout::nchw, Layout::nhwc})
      for (bool bias : {false, true})
        for (MathMode math : {MathMode::fp32, MathMode::tf32})
          out.push_back({name + (layout == Layout::nhwc ? "_nhwc" : "_nchw") + (bias ? "_bias" : "_nobias") + "_" +
                             std::string(fusetune::math_mode_name(math)),
                         shape.first, shape.second, layout, bias, math});
  return out;
}

class GpuConvNdGraph : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string why;
    if (!fusetune::gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ctx_.emplace(0);  // cuDNN's runtime binds to the primary context: make it current first
    stream_.emplace();
    handle_.emplace();
    handle_->set_stream(stream_->get());
  }
  // Destroyed in reverse: the handle before its stream, the context last.
  std::optional<fusetune::gpu::Context> ctx_;
  std::optional<fusetune::gpu::Stream> stream_;
  std::optional<fusetune::gpu::CudnnHandle> handle_;
};

// Per output: the reference with the bias, and the allowed error.
struct Expected {
  std::vector<double> value, bound;
};

Expected expected(const Case& tc, const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& bias) {
  namespace ref = fusetune::reference;
  ref::detail::MainTerms terms;
  Expected e;
  e.value = ref::detail::conv_any(tc.conv, x.data(), w.data(), tc.bias ? bias.data() : nullptr, &terms);
  e.bound.resize(e.value.size());
  const int64_t plane = tc.conv.o() * tc.conv.p() * tc.conv.q();
  for (size_t i = 0; i < e.value.size(); ++i) {
    const double b = tc.bias ? double(bias[size_t(int64_t(i) / plane % tc.conv.k)]) : 0.0;
    if (tc.math == MathMode::fp32) {
      e.bound[i] = 1e-5 * (terms.a[i] + std::fabs(b));
    } else {
      ref::Bounded v = ref::conv_bounded(terms.y[i], terms.a[i], terms.b[i], terms.n[i], MathMode::tf32);
      if (tc.bias) ref::add_bias_bounded(v, b);
      e.bound[i] = v.e;
    }
  }
  return e;
}

TEST_P(GpuConvNdGraph, EveryConfigurationThatBuildsComputesTheProblem) {
  const Case& tc = GetParam();
  const ConvNdDesc desc{tc.kind, tc.conv, tc.layout, tc.bias, tc.math};
  const auto geo = fusetune::worker::conv_nd_geometry(tc.kind, tc.conv, tc.layout);

  std::optional<ConvNdGraph> graph;
  std::vector<GraphEngine> engines;
  try {
    graph.emplace(handle_->get(), desc);
    engines = graph->engines(kMostConfigs);
  } catch (const GraphRefused& e) {
    // The record the worker will keep (`not_supported`); a graph without the bias must not be
    // refused: it is the main operator of every v2 conv problem.
    std::cout << "  [" << tc.name << "] refused: " << e.what() << "\n";
    EXPECT_FALSE(std::string(e.what()).empty());
    EXPECT_TRUE(tc.bias) << "cuDNN refused the conv alone: " << e.what();
    return;
  }

  const std::vector<float> x = conv_nd_test::draw(size_t(tc.conv.input_elems()), 43, 0);
  const std::vector<float> w = conv_nd_test::draw(size_t(tc.conv.weight_elems()), 43, 1);
  const std::vector<float> bias = conv_nd_test::draw(size_t(tc.conv.k), 43, 2);
  const Expected want = expected(tc, x, w, bias);
  const size_t out_elems = size_t(tc.conv.conv_out_elems());

  fusetune::gpu::DeviceBuffer xd(x.size() * 4), wd(w.size() * 4), bd(bias.size() * 4), yd((out_elems + kGuardFloats) * 4);
  xd.upload(std::span<const float>(conv_nd_test::to_memory(x, geo.x)));
  wd.upload(std::span<const float>(conv_nd_test::to_memory(w, geo.w)));
  bd.upload(std::span<const float>(bias));
  const fusetune::worker::ConvNdBuffers buffers{xd.ptr(), wd.ptr(), bd.ptr(), yd.ptr()};

  // Runs one configuration on a poisoned output; returns it (memory order) after checking the guard.
  const auto run = [&](ConvNdGraph& g, const GraphEngine& e) {
    const int64_t ws_bytes = e.by_name_only ? g.prepare_named(e.name) : g.prepare(e.key);
    fusetune::gpu::DeviceBuffer ws(size_t(std::max<int64_t>(ws_bytes, 256)));
    yd.fill_u32(kSentinel);
    if (e.by_name_only) {
      g.execute_named(e.name, buffers, ws.ptr(), ws.size());
    } else {
      g.execute(e.key, buffers, ws.ptr(), ws.size());
    }
    stream_->synchronize();
    std::vector<float> all = yd.download<float>();
    for (size_t i = out_elems; i < all.size(); ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, &all[i], sizeof bits);
      if (bits != kSentinel) {
        ADD_FAILURE() << e.name << " wrote past the end of y at element " << i;
        break;
      }
    }
    all.resize(out_elems);
    return all;
  };

  // The outputs outside the bound, the first few reported.
  const auto wrong = [&](const std::vector<float>& mem, const std::string& name) {
    const std::vector<float> got = conv_nd_test::to_logical(mem, geo.y);
    int bad = 0;
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double err = std::fabs(double(got[i]) - want.value[i]);
      if (std::isfinite(want.bound[i])) worst = std::max(worst, err / std::max(want.bound[i], 1e-300));
      if (!(err <= want.bound[i]) && ++bad <= 5) {
        ADD_FAILURE() << name << " output " << i << ": " << got[i] << " vs " << want.value[i] << " (bound "
                      << want.bound[i] << ")";
      }
    }
    std::cout << "    " << name << ": worst error / bound = " << worst << (bad ? " WRONG" : "") << "\n";
    EXPECT_EQ(bad, 0) << name << ": " << bad << " of " << got.size() << " outputs outside the bound";
    return bad;
  };

  int ok = 0;
  std::optional<GraphEngine> first_keyed;
  for (const GraphEngine& e : engines) {
    std::cout << "  [" << tc.name << "] " << e.name << (e.built ? " built" : " not built: " + e.reason)
              << " workspace=" << e.workspace << (e.by_name_only ? " (by name only)" : "") << "\n";
    if (!e.built) {
      EXPECT_FALSE(e.reason.empty()) << e.name;
      continue;
    }
    SCOPED_TRACE(e.name);
    std::vector<float> mem;
    try {
      mem = run(*graph, e);
    } catch (const GraphRefused& r) {
      std::cout << "    refused at run: " << r.what() << "\n";
      continue;
    }
    const int bad = wrong(mem, e.name);
    ok += bad == 0;
    if (!first_keyed && !e.by_name_only && bad == 0) first_keyed = e;
  }
  if (!tc.bias) {
    EXPECT_GE(ok, 1) << "no configuration computed the conv alone";
  }
  if (tc.bias && ok == 0) std::cout << "  [" << tc.name << "] no configuration with the bias in the graph ran\n";

  // A stored key builds again in a fresh graph without the heuristics, and computes the problem
  // (within the bound, not bit for bit: some dgrad engines accumulate with atomics).
  if (first_keyed) {
    ConvNdGraph fresh(handle_->get(), desc);
    EXPECT_FALSE(fresh.built(first_keyed->key));
    const std::vector<float> again = run(fresh, *first_keyed);
    EXPECT_TRUE(fresh.built(first_keyed->key));
    EXPECT_EQ(wrong(again, "rebuilt " + fresh.name(first_keyed->key)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, GpuConvNdGraph, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
