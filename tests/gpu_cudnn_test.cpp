// GPU tests of CudnnConv: the search, math-mode filtering, and every usable algorithm's output
// against a float64 direct convolution computed here, in NCHW and NHWC, fp32 and tf32, with and
// without bias. Skips with the reason when there is no GPU or driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/context.hpp"
#include "gpu/cudnn_conv.hpp"
#include "worker/cudnn_graph.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"
#include "spec/parser.hpp"
#include "spec_builders.hpp"
#include "worker/plan_prebuild.hpp"
#include "random_floats.hpp"

namespace fusetune::gpu {
namespace {

using spec::Layout;
using codegen::EngineKey;
using worker::CudnnGraph;
using worker::GraphBuffers;
using worker::GraphDesc;
using worker::GraphEngine;
using worker::GraphRefused;

constexpr uint32_t kSentinel = 0x7fc00000u;  // a quiet NaN: an unwritten output never passes
constexpr size_t kGuardFloats = 64;          // after y: a write past the end changes them

spec::Conv make_conv(int64_t stride, int64_t pad, int64_t dil, int64_t h = 9, int64_t w = 9) {
  return spec_builders::with_window(spec_builders::conv(2, 3, h, w, 4, 3, 3), stride, pad, dil);
}

// ---- host data and the float64 reference, all in logical NCHW / KCRS order ------------------

using testing::random_floats;

std::vector<double> reference_conv(const spec::Conv& cv, const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>* bias) {
  const int64_t P = cv.p(), Q = cv.q();
  std::vector<double> y(static_cast<size_t>(cv.n * cv.k * P * Q));
  for (int64_t n = 0; n < cv.n; ++n)
    for (int64_t k = 0; k < cv.k; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          double acc = bias ? double((*bias)[static_cast<size_t>(k)]) : 0.0;
          for (int64_t c = 0; c < cv.c; ++c)
            for (int64_t r = 0; r < cv.r; ++r)
              for (int64_t s = 0; s < cv.s; ++s) {
                const int64_t ih = p * cv.stride_h - cv.pad_h + r * cv.dil_h;
                const int64_t iw = q * cv.stride_w - cv.pad_w + s * cv.dil_w;
                if (ih < 0 || ih >= cv.h || iw < 0 || iw >= cv.w) continue;
                acc += double(x[static_cast<size_t>(((n * cv.c + c) * cv.h + ih) * cv.w + iw)]) *
                       double(w[static_cast<size_t>(((k * cv.c + c) * cv.r + r) * cv.s + s)]);
              }
          y[static_cast<size_t>(((n * cv.k + k) * P + p) * Q + q)] = acc;
        }
  return y;
}

// (A, B, C, D) row-major -> (A, C, D, B): NCHW -> NHWC, and KCRS -> KRSC.
std::vector<float> to_channels_last(const std::vector<float>& v, int64_t a, int64_t b, int64_t c, int64_t d) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t l = 0; l < d; ++l)
          out[static_cast<size_t>(((i * c + k) * d + l) * b + j)] = v[static_cast<size_t>(((i * b + j) * c + k) * d + l)];
  return out;
}

// (A, C, D, B) row-major -> (A, B, C, D): NHWC output back to NCHW.
std::vector<float> from_channels_last(const std::vector<float>& v, int64_t a, int64_t b, int64_t c, int64_t d) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t l = 0; l < d; ++l)
          out[static_cast<size_t>(((i * b + j) * c + k) * d + l)] = v[static_cast<size_t>(((i * c + k) * d + l) * b + j)];
  return out;
}

// fp32: KernelBench's |out - ref| <= 1e-4 + 1e-4 |ref|. tf32: 5e-3 relative, with a floor of 1
// (inputs are O(1)) so that outputs near zero are not held to a relative bound TF32 cannot meet.
::testing::AssertionResult matches(const std::vector<float>& got, const std::vector<double>& ref, MathMode mode) {
  if (got.size() != ref.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << ref.size();
  double max_abs = 0.0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(double(got[i]) - ref[i]);
    const double tol = mode == MathMode::fp32 ? 1e-4 + 1e-4 * std::abs(ref[i]) : 5e-3 * std::max(1.0, std::abs(ref[i]));
    if (!(d <= tol)) {  // NaN (an unwritten element) fails too
      if (bad++ == 0) first_bad = i;
    }
    if (std::isfinite(d)) max_abs = std::max(max_abs, d);
  }
  if (bad == 0) return ::testing::AssertionSuccess() << "max abs error " << max_abs;
  return ::testing::AssertionFailure() << bad << " of " << ref.size() << " elements out of tolerance; first at "
                                       << first_bad << ": got " << got[first_bad] << ", want " << ref[first_bad]
                                       << "; max abs error " << max_abs;
}

// The checker checked: these run without a GPU, so a wrong reference cannot pass for a
// wrong cuDNN result (or fail a right one) unnoticed.
TEST(GpuCudnnReference, PicksTheInputPixelAStrideDilationAndPaddingSelect) {
  spec::Conv cv = make_conv(2, 1, 2);  // P = Q = 4
  cv.n = cv.c = cv.k = 1;
  const std::vector<float> x = random_floats(81, 3);
  std::vector<float> w(9, 0.0f);
  w[2 * 3 + 1] = 1.0f;  // r = 2, s = 1: input row 2p - 1 + 2*2, column 2q - 1 + 1*2
  const std::vector<double> y = reference_conv(cv, x, w, nullptr);
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t q = 0; q < 4; ++q) {
      const int64_t ih = 2 * p + 3, iw = 2 * q + 1;
      const double want = ih < 9 && iw < 9 ? double(x[static_cast<size_t>(ih * 9 + iw)]) : 0.0;
      EXPECT_EQ(y[static_cast<size_t>(p * 4 + q)], want) << "p=" << p << " q=" << q;
    }
}

TEST(GpuCudnnReference, ChannelsLastRoundTripsAndPutsChannelsInnermost) {
  const std::vector<float> x = random_floats(2 * 3 * 5 * 7, 1);
  const std::vector<float> t = to_channels_last(x, 2, 3, 5, 7);
  EXPECT_EQ(t[((1 * 5 + 4) * 7 + 6) * 3 + 2], x[((1 * 3 + 2) * 5 + 4) * 7 + 6]);  // (n1, c2, h4, w6)
  EXPECT_EQ(from_channels_last(t, 2, 3, 5, 7), x);
  const std::vector<double> ref{1.0, -2.0};
  EXPECT_FALSE(matches({1.0f, std::numeric_limits<float>::quiet_NaN()}, ref, MathMode::fp32));
  EXPECT_FALSE(matches({1.0f, -2.001f}, ref, MathMode::fp32));
  EXPECT_TRUE(matches({1.0f, -2.001f}, ref, MathMode::tf32));
}

// ---- fixture: primary context, handle, stream ------------------------------------------------

class GpuCudnn : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ctx_.emplace(0);  // cuDNN's runtime binds to the primary context: make it current first
    stream_.emplace();
    handle_.emplace();
    handle_->set_stream(stream_->get());
  }

  // Destroyed in reverse: the handle before the stream it was given, the context last.
  std::optional<Context> ctx_;
  std::optional<Stream> stream_;
  std::optional<CudnnHandle> handle_;
};

// One problem on the device: inputs uploaded in the layout under test, y with a guard band.
struct Buffers {
  Buffers(const spec::Conv& cv, Layout layout, uint32_t seed)
      : x_host(random_floats(static_cast<size_t>(cv.input_elems()), seed)),
        w_host(random_floats(static_cast<size_t>(cv.weight_elems()), seed + 1)),
        bias_host(random_floats(static_cast<size_t>(cv.k), seed + 2)),
        x(x_host.size() * sizeof(float)),
        w(w_host.size() * sizeof(float)),
        bias(bias_host.size() * sizeof(float)),
        y((static_cast<size_t>(cv.conv_out_elems()) + kGuardFloats) * sizeof(float)),
        conv(cv),
        nhwc(layout == Layout::nhwc) {
    const auto x_dev = nhwc ? to_channels_last(x_host, cv.n, cv.c, cv.h, cv.w) : x_host;
    const auto w_dev = nhwc ? to_channels_last(w_host, cv.k, cv.c, cv.r, cv.s) : w_host;
    x.upload(std::span<const float>(x_dev));
    w.upload(std::span<const float>(w_dev));
    bias.upload(std::span<const float>(bias_host));
  }

  void poison_y() { y.fill_u32(kSentinel); }

  // y in logical NCHW order; fails the test when the guard band was written.
  std::vector<float> read_y() const {
    std::vector<float> all = y.download<float>();
    const size_t count = static_cast<size_t>(conv.conv_out_elems());
    for (size_t i = count; i < all.size(); ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, &all[i], sizeof bits);
      EXPECT_EQ(bits, kSentinel) << "write past the end of y at element " << i;
    }
    all.resize(count);
    return nhwc ? from_channels_last(all, conv.n, conv.k, conv.p(), conv.q()) : all;
  }

  std::vector<float> x_host, w_host, bias_host;
  DeviceBuffer x, w, bias, y;
  spec::Conv conv;
  bool nhwc;
};

// ---- every algorithm, every layout and mode, against the float64 reference --------------------

struct Case {
  std::string name;
  spec::Conv conv;
  Layout layout;
  MathMode mode;
};

// gtest prints a parameter into the test's listing: the name, not the struct's bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class GpuCudnnConv : public GpuCudnn, public ::testing::WithParamInterface<Case> {};

TEST_P(GpuCudnnConv, EveryUsableAlgorithmMatchesFloat64Reference) {
  const Case& tc = GetParam();
  CudnnConv conv(*handle_, tc.conv, tc.layout, tc.mode);
  Buffers buf(tc.conv, tc.layout, 1234);

  const size_t ws_bytes = conv.max_workspace_bytes();
  DeviceBuffer ws(ws_bytes);
  const std::vector<ConvAlgoChoice> found = conv.find(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), ws_bytes);

  // The search: at least one result, all usable for the mode, fastest first, the first chosen.
  ASSERT_FALSE(found.empty());
  EXPECT_LE(found.size(), conv.all_results().size());
  for (size_t i = 0; i < found.size(); ++i) {
    const ConvAlgoChoice& r = found[i];
    std::cout << "  [" << tc.name << "] " << r.algo_name << " math=" << math_type_name(r.math_type)
              << " time=" << r.time_ms << " ms workspace=" << r.workspace << " B\n";
    EXPECT_EQ(r.status, CUDNN_STATUS_SUCCESS);
    EXPECT_TRUE(math_type_allowed(tc.mode, r.math_type)) << r.algo_name << " " << math_type_name(r.math_type);
    if (tc.mode == MathMode::fp32) {
      EXPECT_NE(r.math_type, CUDNN_TENSOR_OP_MATH);
    }
    EXPECT_LE(r.workspace, ws_bytes);
    if (i > 0) {
      EXPECT_LE(found[i - 1].time_ms, r.time_ms);
    }
  }
  ASSERT_TRUE(conv.chosen().has_value());
  EXPECT_EQ(conv.chosen()->algo, found.front().algo);
  EXPECT_EQ(conv.chosen()->math_type, found.front().math_type);
  EXPECT_EQ(conv.chosen_name(), found.front().algo_name + " (" + std::string(math_mode_name(tc.mode)) + ")");
  std::cout << "  [" << tc.name << "] chosen: " << conv.chosen_name() << "\n";

  // Every usable algorithm, conv alone: each is a candidate the tuner may pick.
  const std::vector<double> ref = reference_conv(tc.conv, buf.x_host, buf.w_host, nullptr);
  for (const ConvAlgoChoice& r : found) {
    SCOPED_TRACE(r.algo_name + " math=" + math_type_name(r.math_type));
    conv.choose(r);
    buf.poison_y();
    conv.forward(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), ws_bytes, 0);
    stream_->synchronize();
    EXPECT_TRUE(matches(buf.read_y(), ref, tc.mode));
  }

  // The best one, with the conv bias added (the unfused baseline's first step).
  const std::vector<double> ref_bias = reference_conv(tc.conv, buf.x_host, buf.w_host, &buf.bias_host);
  conv.choose(found.front());
  buf.poison_y();
  conv.forward(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), ws_bytes, buf.bias.ptr());
  stream_->synchronize();
  EXPECT_TRUE(matches(buf.read_y(), ref_bias, tc.mode));
}

std::vector<Case> all_cases() {
  const std::vector<std::pair<std::string, spec::Conv>> shapes = {
      {"plain", make_conv(1, 0, 1)},                 // Winograd and FFT apply
      {"stride2_pad1_dil2", make_conv(2, 1, 2)},     // the brief's awkward one
      {"pad1_w7", make_conv(1, 1, 1, 9, 7)},         // padding, W not a multiple of 4
  };
  std::vector<Case> cases;
  for (const auto& [shape, conv] : shapes)
    for (const Layout layout : {Layout::nchw, Layout::nhwc})
      for (const MathMode mode : {MathMode::fp32, MathMode::tf32})
        cases.push_back(Case{shape + (layout == Layout::nchw ? "_nchw_" : "_nhwc_") +
                                 std::string(math_mode_name(mode)),
                             conv, layout, mode});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCudnnConv, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

// ---- misuse is an error, not undefined behaviour ---------------------------------------------

TEST_F(GpuCudnn, ForwardBeforeFindThrows) {
  const spec::Conv cv = make_conv(1, 0, 1);
  CudnnConv conv(*handle_, cv, Layout::nchw, MathMode::fp32);
  EXPECT_FALSE(conv.chosen().has_value());
  EXPECT_EQ(conv.chosen_name(), "none");
  Buffers buf(cv, Layout::nchw, 7);
  EXPECT_THROW(conv.forward(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), 0, 0, 0), Error);
}

TEST_F(GpuCudnn, Fp32RefusesATensorOpResult) {
  CudnnConv conv(*handle_, make_conv(1, 0, 1), Layout::nchw, MathMode::fp32);
  const ConvAlgoChoice tensor_op{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1.0f, 0, CUDNN_TENSOR_OP_MATH,
                                 "IMPLICIT_PRECOMP_GEMM", CUDNN_STATUS_SUCCESS};
  EXPECT_THROW(conv.choose(tensor_op), Error);
  EXPECT_FALSE(conv.chosen().has_value());
}

TEST_F(GpuCudnn, ChooseWithoutSearchRunsAStoredChoice) {
  // What a re-run from the database does: no search, the stored (algorithm, math type).
  const spec::Conv cv = make_conv(2, 1, 2);
  // IMPLICIT_GEMM in NCHW is cuDNN's most general algorithm: it supports every geometry.
  CudnnConv conv(*handle_, cv, Layout::nchw, MathMode::fp32);
  conv.choose(ConvAlgoChoice{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 0.0f, 0, CUDNN_FMA_MATH, "", 0});
  EXPECT_EQ(conv.chosen_name(), "IMPLICIT_GEMM (fp32)");
  Buffers buf(cv, Layout::nchw, 99);
  DeviceBuffer ws(conv.required_workspace_bytes());
  buf.poison_y();
  conv.forward(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), ws.size(), buf.bias.ptr());
  stream_->synchronize();
  EXPECT_TRUE(matches(buf.read_y(), reference_conv(cv, buf.x_host, buf.w_host, &buf.bias_host), MathMode::fp32));
}

TEST_F(GpuCudnn, TooSmallWorkspaceThrows) {
  const spec::Conv cv = make_conv(1, 0, 1);
  CudnnConv conv(*handle_, cv, Layout::nchw, MathMode::tf32);
  Buffers buf(cv, Layout::nchw, 5);
  const size_t ws_bytes = conv.max_workspace_bytes();
  DeviceBuffer ws(ws_bytes);
  for (const ConvAlgoChoice& r : conv.find(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), ws_bytes)) {
    if (r.workspace == 0) continue;
    conv.choose(r);
    EXPECT_THROW(conv.forward(buf.x.ptr(), buf.w.ptr(), buf.y.ptr(), ws.ptr(), r.workspace - 1, 0), Error);
    return;
  }
  GTEST_SKIP() << "no algorithm needs a workspace for this shape";
}

// A conv choice whose knobs the frontend cannot name is stored by cuDNN's name and found again by
// it in a fresh worker (a fresh CudnnGraph): every configuration engines() built (by key or by
// name only) is found by its name, needs the same workspace and computes the conv; a name cuDNN
// does not offer is refused with a reason.
TEST_F(GpuCudnn, AGraphConfigurationIsFoundAgainByItsName) {
  GraphDesc d;
  d.problem = spec::parse("conv2d(n=2,c=16,h=12,w=12,k=32,r=3,bias=false) | relu");
  d.in_layout = Layout::nchw;
  d.math = MathMode::tf32;
  const spec::Conv& cv = d.problem.conv;
  Buffers buf(cv, Layout::nchw, 77);
  const std::vector<double> want = reference_conv(cv, buf.x_host, buf.w_host, nullptr);
  CudnnGraph listing(handle_->get(), d);
  int checked = 0, by_name_only = 0;
  for (const GraphEngine& e : listing.engines()) {
    if (!e.built) continue;
    SCOPED_TRACE(e.name);
    by_name_only += e.by_name_only;
    CudnnGraph fresh(handle_->get(), d);
    const int64_t ws_bytes = fresh.prepare_named(e.name);
    EXPECT_EQ(ws_bytes, e.workspace);
    DeviceBuffer ws(size_t(std::max<int64_t>(ws_bytes, 256)));
    GraphBuffers b;
    b.x = buf.x.ptr();
    b.w = buf.w.ptr();
    b.out = buf.y.ptr();
    buf.poison_y();
    fresh.execute_named(e.name, b, ws.ptr(), ws.size());
    stream_->synchronize();
    EXPECT_TRUE(matches(buf.read_y(), want, MathMode::tf32));
    ++checked;
  }
  std::cout << "  " << checked << " configurations found again by name, " << by_name_only
            << " of them known by name only\n";
  EXPECT_GE(checked, 1);
  CudnnGraph fresh(handle_->get(), d);
  EXPECT_THROW((void)fresh.prepare_named("eng9999_k2=1"), GraphRefused);
}

// A plan built ahead on the worker's second thread (worker::PlanPrebuilder, on a cuDNN handle of
// its own) computes what the same configuration built on the worker's own handle computes, bit
// for bit, for the conv alone (checked against the float64 reference too) and for a fused
// conv + epilogue graph (runtime-compiled kernels); a configuration cuDNN refuses surfaces where
// it is taken, as GraphRefused; one never asked for is not there.
TEST_F(GpuCudnn, APlanBuiltAheadOnAnotherThreadComputesWhatTheSamePlanComputes) {
  for (const bool epilogue : {false, true}) {
    SCOPED_TRACE(epilogue ? "conv + epilogue" : "conv alone");
    GraphDesc d;
    d.problem = spec::parse("conv2d(n=2,c=16,h=20,w=20,k=32,r=3) | min(0.5) | add(param[k]) | mul(2)");
    d.in_layout = Layout::nchw;
    d.epilogue = epilogue;
    d.bias = epilogue;
    d.math = MathMode::tf32;
    const spec::Conv& cv = d.problem.conv;
    Buffers buf(cv, Layout::nchw, 91);
    const std::vector<float> chan_host = random_floats(2 * size_t(cv.k), 93);
    DeviceBuffer chan(chan_host.size() * sizeof(float));
    chan.upload(std::span<const float>(chan_host));
    if (epilogue) {  // the fused graph reads KRSC filters
      const auto w_krsc = to_channels_last(buf.w_host, cv.k, cv.c, cv.r, cv.s);
      buf.w.upload(std::span<const float>(w_krsc));
    }
    CudnnGraph here(handle_->get(), d);
    std::vector<GraphEngine> offered = here.engines(0, false);
    ASSERT_FALSE(offered.empty());
    worker::PlanPrebuilder ahead(ctx_->get(), stream_->get());
    std::vector<const GraphEngine*> asked;  // the first two configurations known by their key
    for (const GraphEngine& e : offered) {
      if (e.by_name_only) continue;
      ahead.ask(d, e.key);
      asked.push_back(&e);
      if (asked.size() == 2) break;
    }
    ahead.ask(d, EngineKey{9999, {}});
    ahead.drain();
    int compared = 0;
    for (const GraphEngine* e : asked) {
      SCOPED_TRACE(e->name);
      const auto run = [&](CudnnGraph& g) {
        const int64_t ws_bytes = g.prepare(e->key);
        DeviceBuffer ws(size_t(std::max<int64_t>(ws_bytes, 256)));
        GraphBuffers b{buf.x.ptr(), buf.w.ptr(), chan.ptr(), buf.y.ptr()};
        buf.poison_y();
        g.execute(e->key, b, ws.ptr(), ws.size());
        stream_->synchronize();
        return buf.read_y();
      };
      std::unique_ptr<worker::PlanPrebuilder::Built> built = ahead.take(d, e->key);
      ASSERT_TRUE(built);
      if (built->error) {  // refused ahead: refused here too
        EXPECT_THROW((void)here.prepare(e->key), GraphRefused);
        continue;
      }
      ASSERT_TRUE(built->graph);
      EXPECT_TRUE(built->graph->built(e->key));
      const std::vector<float> got = run(*built->graph);
      const std::vector<float> want = run(here);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
      if (!epilogue) {
        const std::vector<double> ref = reference_conv(cv, buf.x_host, buf.w_host, nullptr);
        EXPECT_TRUE(matches(got, ref, MathMode::tf32));
      }
      ++compared;
    }
    EXPECT_GE(compared, 1);
    const auto refused = ahead.take(d, EngineKey{9999, {}});
    ASSERT_TRUE(refused);
    ASSERT_TRUE(refused->error);
    EXPECT_THROW(std::rethrow_exception(refused->error), GraphRefused);
    EXPECT_FALSE(ahead.take(d, EngineKey{9998, {}}));
  }
}

}  // namespace
}  // namespace fusetune::gpu
