// GPU tests of the cuBLASLt GEMM runner (gpu/cublaslt.hpp): every algorithm cuBLASLt's heuristic
// returns, for linear with and without bias, matmul with each transpose combination, batches and
// odd sizes, in fp32 and tf32, against reference::detail::gemm_any in float64 -- fp32 within 1e-5
// of the sum of |terms|, tf32 within the TF32 rule's bound --; each output poisoned before the
// run and a guard band after it checked; each algorithm rebuilt from its key's text giving the
// same bits. Skips with the reason when there is no GPU or driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/context.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"
#include "reference/bounds.hpp"
#include "reference/model_main.hpp"
#include "random_floats.hpp"

namespace fusetune::gpu {
namespace {

constexpr uint32_t kSentinel = 0x7fc00000u;  // a quiet NaN: an unwritten output never passes
constexpr size_t kGuardFloats = 64;          // after the output: a write past the end changes them
constexpr size_t kMaxWorkspace = size_t(32) << 20;
constexpr int kMaxAlgos = 16;                // the brief asks for at least the first 8

using testing::random_floats;

struct Case {
  std::string name;
  spec::Gemm gemm;
  bool linear;
  MathMode mode;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

spec::Gemm gemm(int64_t batch, int64_t m, int64_t k, int64_t n, bool bias, bool trans_a, bool trans_b) {
  spec::Gemm g;
  g.batch = batch;
  g.m = m;
  g.k = k;
  g.n = n;
  g.bias = bias;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  return g;
}

// Per element, how far the output may be from the float64 reference: fp32 1e-5 of the sum of
// |terms| (the bias counted as one; a K-term fp32 sum is within about K u of it, K <= 256 here,
// and in practice within sqrt(K) u); tf32 the TF32 rule's bound for a K-term dot product, then
// its fp32 bias add (reference/bounds.hpp, as the verifier applies it).
std::vector<double> tolerances(const Case& tc, const reference::detail::MainTerms& terms, const std::vector<float>& bias) {
  std::vector<double> tol(terms.y.size());
  for (size_t i = 0; i < tol.size(); ++i) {
    const double b = tc.gemm.bias ? double(bias[i % size_t(tc.gemm.n)]) : 0.0;
    switch (tc.mode) {
      case MathMode::fp32: tol[i] = 1e-5 * (terms.a[i] + std::abs(b)); break;
      case MathMode::tf32: {
        reference::Bounded bd = reference::conv_bounded(terms.y[i], terms.a[i], terms.b[i], terms.n[i], MathMode::tf32);
        if (tc.gemm.bias) reference::add_bias_bounded(bd, b);
        tol[i] = bd.e;
        break;
      }
    }
  }
  return tol;
}

::testing::AssertionResult within(const std::vector<float>& got, const std::vector<double>& ref,
                                  const std::vector<double>& tol) {
  size_t bad = 0, first = 0;
  double worst = 0.0;  // largest |error| / tolerance
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = std::abs(double(got[i]) - ref[i]);
    if (!(d <= tol[i])) {  // NaN (an unwritten element) fails too
      if (bad++ == 0) first = i;
    }
    if (std::isfinite(d) && tol[i] > 0) worst = std::max(worst, d / tol[i]);
  }
  if (bad == 0) return ::testing::AssertionSuccess() << "worst error " << worst << " of its tolerance";
  return ::testing::AssertionFailure() << bad << " of " << ref.size() << " out of tolerance; first at " << first
                                       << ": got " << got[first] << ", want " << ref[first] << " within "
                                       << tol[first] << "; worst " << worst << " of the tolerance";
}

// The checker checked: without a GPU, a wrong tolerance cannot pass a wrong result unnoticed.
TEST(GpuCublasLtChecker, TolerancesCatchAnUnwrittenOrTf32RoundedOutput) {
  Case tc{"x", gemm(1, 2, 64, 3, false, false, false), true, MathMode::fp32};
  const auto a = random_floats(2 * 64, 1), b = random_floats(64 * 3, 2);
  reference::detail::MainTerms terms;
  const auto ref = reference::detail::gemm_any(tc.gemm, true, a.data(), b.data(), nullptr, &terms);
  std::vector<float> got(ref.begin(), ref.end());
  EXPECT_TRUE(within(got, ref, tolerances(tc, terms, {})));
  got[1] = std::nanf("");
  EXPECT_FALSE(within(got, ref, tolerances(tc, terms, {})));
  // A TF32-sized error (2^-11 of the sum of |terms|) fails fp32 and passes tf32.
  got.assign(ref.begin(), ref.end());
  got[0] = float(ref[0] + terms.a[0] * 0x1p-11);
  EXPECT_FALSE(within(got, ref, tolerances(tc, terms, {})));
  tc.mode = MathMode::tf32;
  EXPECT_TRUE(within(got, ref, tolerances(tc, terms, {})));
}

// ---- fixture: primary context, stream, cuBLASLt handle, workspace --------------------------

class GpuCublasLt : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ctx_.emplace(0);  // cuBLASLt's runtime binds to the primary context: make it current first
    stream_.emplace();
    handle_.emplace();
    workspace_.emplace(kMaxWorkspace);
  }

  // Destroyed in reverse: workspace and handle before the stream and the context.
  std::optional<Context> ctx_;
  std::optional<Stream> stream_;
  std::optional<CublasLtHandle> handle_;
  std::optional<DeviceBuffer> workspace_;
};

// One problem on the device: inputs from fixed seeds, the output with a guard band after it.
struct Buffers {
  Buffers(const spec::Gemm& g, uint32_t seed)
      : gemm(g),
        a_host(random_floats(size_t(gemm_a_elems(g)), seed)),
        b_host(random_floats(size_t(gemm_b_elems(g)), seed + 1)),
        bias_host(random_floats(size_t(g.n), seed + 2)),
        a(a_host.size() * sizeof(float)),
        b(b_host.size() * sizeof(float)),
        bias(bias_host.size() * sizeof(float)),
        c((size_t(gemm_out_elems(g)) + kGuardFloats) * sizeof(float)) {
    a.upload(std::span<const float>(a_host));
    b.upload(std::span<const float>(b_host));
    bias.upload(std::span<const float>(bias_host));
  }

  void poison() { c.fill_u32(kSentinel); }
  [[nodiscard]] CUdeviceptr bias_ptr() const { return gemm.bias ? bias.ptr() : 0; }

  // The output; fails the test when the guard band was written.
  [[nodiscard]] std::vector<float> read() const {
    std::vector<float> all = c.download<float>();
    const size_t count = size_t(gemm_out_elems(gemm));
    for (size_t i = count; i < all.size(); ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, &all[i], sizeof bits);
      EXPECT_EQ(bits, kSentinel) << "write past the end of the output at element " << i;
    }
    all.resize(count);
    return all;
  }

  spec::Gemm gemm;
  std::vector<float> a_host, b_host, bias_host;
  DeviceBuffer a, b, bias, c;
};

class GpuCublasLtGemm : public GpuCublasLt, public ::testing::WithParamInterface<Case> {};

TEST_P(GpuCublasLtGemm, EveryHeuristicAlgorithmMatchesFloat64AndRebuildsBitForBit) {
  const Case& tc = GetParam();
  GemmPlan plan(*handle_, tc.gemm, tc.linear, tc.mode);
  Buffers buf(tc.gemm, 1234);
  reference::detail::MainTerms terms;
  const std::vector<double> ref = reference::detail::gemm_any(tc.gemm, tc.linear, buf.a_host.data(),
                                                              buf.b_host.data(),
                                                              tc.gemm.bias ? buf.bias_host.data() : nullptr, &terms);
  const std::vector<double> tol = tolerances(tc, terms, buf.bias_host);

  const std::vector<GemmAlgo> algos = plan.algorithms(kMaxAlgos, kMaxWorkspace);
  ASSERT_FALSE(algos.empty()) << "cuBLASLt's heuristic returned no algorithm";
  for (const GemmAlgo& algo : algos) {
    SCOPED_TRACE(algo.name());
    std::cout << "  [" << tc.name << "] " << algo.name() << " workspace=" << algo.workspace_bytes
              << " waves=" << algo.waves << "\n";
    EXPECT_LE(algo.workspace_bytes, kMaxWorkspace);

    buf.poison();
    plan.run(algo, buf.a.ptr(), buf.b.ptr(), buf.bias_ptr(), buf.c.ptr(), workspace_->ptr(), workspace_->size(),
             stream_->get());
    stream_->synchronize();
    const std::vector<float> got = buf.read();
    EXPECT_TRUE(within(got, ref, tol));

    // The stored form: the key's text, parsed back and rebuilt without the heuristic.
    std::string why;
    const std::optional<CublasLtAlgoKey> key = parse_cublaslt_algo_key(algo.key.text(), &why);
    ASSERT_TRUE(key.has_value()) << why;
    const std::optional<GemmAlgo> rebuilt = plan.rebuild(*key, kMaxWorkspace, &why);
    ASSERT_TRUE(rebuilt.has_value()) << why;
    EXPECT_EQ(rebuilt->key, algo.key);
    EXPECT_EQ(rebuilt->workspace_bytes, algo.workspace_bytes);
    buf.poison();
    plan.run(*rebuilt, buf.a.ptr(), buf.b.ptr(), buf.bias_ptr(), buf.c.ptr(), workspace_->ptr(), workspace_->size(),
             stream_->get());
    stream_->synchronize();
    const std::vector<float> again = buf.read();
    ASSERT_EQ(again.size(), got.size());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &again[i], sizeof(float)) != 0 ? 1 : 0;
    EXPECT_EQ(differ, 0u) << "the rebuilt algorithm's output differs in " << differ << " elements";
  }
}

std::vector<Case> cases() {
  struct Shape {
    std::string name;
    spec::Gemm gemm;
    bool linear;
  };
  const std::vector<Shape> shapes = {
      {"linear", gemm(1, 37, 53, 29, false, false, false), true},
      {"linear_bias", gemm(1, 37, 53, 29, true, false, false), true},
      {"linear_bias_64x96x128", gemm(1, 64, 128, 96, true, false, false), true},
      {"matmul_nn", gemm(1, 37, 53, 29, false, false, false), false},
      {"matmul_tn", gemm(1, 37, 53, 29, false, true, false), false},
      {"matmul_nt", gemm(1, 37, 53, 29, false, false, true), false},
      {"matmul_tt", gemm(1, 37, 53, 29, false, true, true), false},
      {"bmm3_nn", gemm(3, 37, 53, 29, false, false, false), false},
      {"bmm3_tn", gemm(3, 37, 53, 29, false, true, false), false},
      {"bmm3_nt", gemm(3, 37, 53, 29, false, false, true), false},
      {"bmm3_tt", gemm(3, 37, 53, 29, false, true, true), false},
      {"bmm2_256x192x160", gemm(2, 160, 256, 192, false, false, false), false},
      {"matmul_1x1x1", gemm(1, 1, 1, 1, false, false, false), false},
  };
  std::vector<Case> out;
  for (const Shape& s : shapes) {
    for (MathMode mode : {MathMode::fp32, MathMode::tf32}) {
      out.push_back({s.name + "_" + std::string(math_mode_name(mode)), s.gemm, s.linear, mode});
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(Shapes, GpuCublasLtGemm, ::testing::ValuesIn(cases()), case_name);

// ---- what run() and rebuild() refuse --------------------------------------------------------

TEST_F(GpuCublasLt, RunRefusesMisalignedPointersAMissingBiasAndASmallWorkspace) {
  const spec::Gemm g = gemm(1, 37, 53, 29, true, false, false);
  GemmPlan plan(*handle_, g, true, MathMode::fp32);
  Buffers buf(g, 7);
  const std::vector<GemmAlgo> algos = plan.algorithms(1, kMaxWorkspace);
  ASSERT_FALSE(algos.empty());
  const GemmAlgo& algo = algos.front();
  const CUdeviceptr ws = workspace_->ptr();
  const size_t ws_bytes = workspace_->size();
  CUstream s = stream_->get();
  EXPECT_THROW(plan.run(algo, buf.a.ptr() + 4, buf.b.ptr(), buf.bias.ptr(), buf.c.ptr(), ws, ws_bytes, s), Error);
  EXPECT_THROW(plan.run(algo, buf.a.ptr(), buf.b.ptr(), buf.bias.ptr(), buf.c.ptr() + 16, ws, ws_bytes, s), Error);
  EXPECT_THROW(plan.run(algo, buf.a.ptr(), buf.b.ptr(), 0, buf.c.ptr(), ws, ws_bytes, s), Error);
  if (algo.workspace_bytes > 0) {
    EXPECT_THROW(plan.run(algo, buf.a.ptr(), buf.b.ptr(), buf.bias.ptr(), buf.c.ptr(), ws, algo.workspace_bytes - 1, s),
                 Error);
  }
  const spec::Gemm no_bias = gemm(1, 37, 53, 29, false, false, false);
  GemmPlan plain(*handle_, no_bias, true, MathMode::fp32);
  const std::vector<GemmAlgo> plain_algos = plain.algorithms(1, kMaxWorkspace);
  ASSERT_FALSE(plain_algos.empty());
  EXPECT_THROW(plain.run(plain_algos.front(), buf.a.ptr(), buf.b.ptr(), buf.bias.ptr(), buf.c.ptr(), ws, ws_bytes, s),
               Error);
  // With a 4-byte alignment the plan takes operands at any float offset.
  GemmPlan loose(*handle_, no_bias, true, MathMode::fp32, 4);
  const std::vector<GemmAlgo> loose_algos = loose.algorithms(1, kMaxWorkspace);
  ASSERT_FALSE(loose_algos.empty());
  EXPECT_NO_THROW(loose.run(loose_algos.front(), buf.a.ptr(), buf.b.ptr(), 0, buf.c.ptr() + 4, ws, ws_bytes, s));
  stream_->synchronize();
  EXPECT_THROW((void)GemmPlan(*handle_, no_bias, true, MathMode::fp32, 24), InputError);
}

TEST_F(GpuCublasLt, RebuildRefusesAKeyThatDoesNotApplyWithCublasLtsReason) {
  GemmPlan plan(*handle_, gemm(1, 37, 53, 29, false, false, false), false, MathMode::fp32);
  std::string why;
  CublasLtAlgoKey bogus;
  bogus.id = 1 << 20;
  EXPECT_FALSE(plan.rebuild(bogus, kMaxWorkspace, &why).has_value());
  EXPECT_NE(why.find("does not apply"), std::string::npos) << why;
  std::cout << "  " << why << "\n";
  // A real key with a workspace cap below what it needs.
  const std::vector<GemmAlgo> algos = plan.algorithms(kMaxAlgos, kMaxWorkspace);
  for (const GemmAlgo& algo : algos) {
    if (algo.workspace_bytes == 0) continue;
    EXPECT_FALSE(plan.rebuild(algo.key, algo.workspace_bytes - 1, &why).has_value()) << algo.name();
    break;
  }
}

}  // namespace
}  // namespace fusetune::gpu
