// GPU tests of GpuReference: the float64 reference kernels agree with the CPU reference
// (reference_output) on the same inputs, for awkward shapes, every op and every reduction;
// under tf32 their bounds and variances equal the CPU twin's (reference_with_bounds) to fp32
// rounding, and the conv-alone answer of the same pass equals the CPU conv; compare() counts
// planted errors exactly in NCHW and NHWC under both rules, passes a CPU-emulated TF32 output
// and fails planted bugs; the fill, guard and spin kernels do what they promise; full-size
// problems run fast enough and index past 2^31 elements.
// Skips with the reason when there is no GPU or driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "error_stats_expect.hpp"
#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/event.hpp"
#include "gpu/stream.hpp"
#include "reference/bounds.hpp"
#include "reference/compare.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/op_math.hpp"
#include "reference/problem_data.hpp"
#include "reference/tolerance.hpp"
#include "spec/ops.hpp"
#include "spec_builders.hpp"
#include "tf32_emulation.hpp"
#include "gpu_fixture.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

constexpr uint32_t kNaNSentinel = 0x7fc00000u;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using spec_builders::conv;
using spec_builders::op;
using spec_builders::param;
using spec_builders::scalar;

// Small shapes that exercise every edge of ref_conv.cu: W=7, stride 2 + pad 1 + dilation 2,
// C=1, K=3, N=1, asymmetric everything without bias, several pixel tiles, several tap
// stages and a partial channel tile, a 1x1 output.
std::vector<spec::Conv> shapes() {
  std::vector<spec::Conv> v;
  v.push_back(conv(2, 3, 9, 7, 5, 3, 3));
  spec::Conv b = conv(1, 1, 7, 7, 3, 3, 3);
  b.stride_h = b.stride_w = 2, b.pad_h = b.pad_w = 1, b.dil_h = b.dil_w = 2;
  v.push_back(b);
  spec::Conv c = conv(3, 5, 11, 13, 17, 2, 3);
  c.stride_h = 2, c.pad_h = 1, c.pad_w = 2, c.dil_w = 2, c.bias = false;
  v.push_back(c);
  spec::Conv d = conv(2, 16, 20, 21, 20, 3, 3);
  d.pad_h = d.pad_w = 1;
  v.push_back(d);
  v.push_back(conv(1, 2, 5, 5, 1, 5, 5));
  return v;
}

std::string describe(const spec::Conv& c) {
  return "conv n=" + std::to_string(c.n) + " c=" + std::to_string(c.c) + " h=" + std::to_string(c.h) +
         " w=" + std::to_string(c.w) + " k=" + std::to_string(c.k) + " r=" + std::to_string(c.r) +
         " s=" + std::to_string(c.s);
}

template <class T>
gpu::DeviceBuffer upload(const std::vector<T>& v) {
  gpu::DeviceBuffer b(v.size() * sizeof(T));
  b.upload(std::span<const T>(v));
  return b;
}

// A RefArrays on the host.
struct HostArrays {
  std::vector<double> values;
  std::vector<float> bound, var;
};

HostArrays download(const RefArrays& a, CUstream s) {
  HostArrays h;
  h.values.resize(size_t(a.count));
  a.values.copy_to_host(h.values.data(), h.values.size() * sizeof(double), 0, s);
  if (!a.bound.empty()) {
    h.bound.resize(size_t(a.count));
    h.var.resize(size_t(a.count));
    a.bound.copy_to_host(h.bound.data(), h.bound.size() * sizeof(float), 0, s);
    a.var.copy_to_host(h.var.data(), h.var.size() * sizeof(float), 0, s);
  }
  return h;
}

size_t bytes_of(const RefArrays& a) { return a.values.size() + a.bound.size() + a.var.size(); }

// Host arrays to the device, as compute() would have left them.
RefArrays upload_answer(const std::vector<double>& values, const std::vector<float>& bound = {},
                        const std::vector<float>& var = {}) {
  RefArrays a;
  a.count = values.size();
  a.values = upload(values);
  if (!bound.empty()) a.bound = upload(bound);
  if (!var.empty()) a.var = upload(var);
  return a;
}

void expect_values_close(const std::vector<double>& gpu, const std::vector<double>& cpu, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  int64_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double c = cpu[i], g = gpu[i];
    if ((std::isnan(c) && std::isnan(g)) || c == g) continue;
    if (std::fabs(g - c) <= 1e-12 * std::max(std::fabs(c), 1.0)) continue;
    if (bad++ < 5) ADD_FAILURE() << what << " element " << i << ": gpu " << g << " cpu " << c;
  }
  EXPECT_EQ(bad, 0) << what << ", of " << cpu.size();
}

// Bounds and variances: equal, or both infinite, or within 1e-5 relative.
void expect_bounds_close(const std::vector<float>& gpu, const std::vector<float>& cpu, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  int64_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double c = cpu[i], g = gpu[i];
    if (c == g) continue;
    if (std::isfinite(c) && std::isfinite(g) && std::fabs(g - c) <= 1e-5 * std::fabs(c)) continue;
    if (bad++ < 5) ADD_FAILURE() << what << " element " << i << ": gpu " << g << " cpu " << c;
  }
  EXPECT_EQ(bad, 0) << what << ", of " << cpu.size();
}

class GpuReferenceTest : public testing::GpuFixture<> {
 protected:
  // compute() on host inputs `d`, downloaded.
  struct Downloaded {
    HostArrays output;
    std::optional<HostArrays> conv;
    size_t device_bytes = 0;  // the answer's buffers
  };
  Downloaded gpu_answer(const GpuReference& ref, const ProblemData& d, bool with_conv) {
    gpu::DeviceBuffer x = upload(d.x), w = upload(d.w), chan = upload(d.chan.empty() ? std::vector<float>{0.0f} : d.chan);
    const RefAnswer a = ref.compute(x.ptr(), w.ptr(), chan.ptr(), with_conv, stream());
    Downloaded r;
    r.output = download(a.output, stream());
    r.device_bytes = bytes_of(a.output);
    if (a.conv) {
      r.conv = download(*a.conv, stream());
      r.device_bytes += bytes_of(*a.conv);
    }
    EXPECT_LE(r.device_bytes, GpuReference::answer_bytes(ref.problem(), with_conv));
    EXPECT_EQ(a.conv.has_value(), with_conv);
    return r;
  }

  // GPU == CPU to 1e-12 relative (absolute below magnitude 1: conv outputs cross zero, and the
  // two references add the taps in different orders). Both NaN, or equal, always match. Under
  // either rule the bounds and variances (the fp32 rule's own under fp32) equal the CPU twin's
  // to 1e-5 relative (fp32 storage, rounded up, of doubles that differ in the last bits), and the
  // conv-alone answer of the same pass equals the CPU conv.
  void expect_matches_cpu(const spec::Problem& p, double threshold_fraction = 0.25, uint64_t seed = 1,
                          MathMode math = MathMode::tf32) {
    SCOPED_TRACE(describe(p.conv) + " " + std::string(math_mode_name(math)));
    const ProblemData d = make_problem_data(p, seed, threshold_fraction);
    const std::vector<double> cpu = reference_output(p, d);
    const GpuReference ref(p, arch_, math);
    const Downloaded gpu = gpu_answer(ref, d, true);
    expect_values_close(gpu.output.values, cpu, "output");
    const BoundedReference twin = reference_with_bounds(p, d, math);
    expect_bounds_close(gpu.output.bound, twin.bound, "output bound");
    expect_bounds_close(gpu.output.var, twin.var, "output variance");
    ASSERT_TRUE(gpu.conv.has_value());
    const std::vector<double> conv_cpu = conv2d_nchw(p.conv, d.x.data(), d.w.data(), nullptr);
    expect_values_close(gpu.conv->values, conv_cpu, "conv alone");
    const BoundedReference conv_twin = conv_with_bounds(p.conv, d.x.data(), d.w.data(), math);
    expect_bounds_close(gpu.conv->bound, conv_twin.bound, "conv E0");
    expect_bounds_close(gpu.conv->var, conv_twin.var, "conv V0");
    if (!p.reduce) {  // in place (no conv answer kept) gives the same bits
      const Downloaded alone = gpu_answer(ref, d, false);
      EXPECT_EQ(std::memcmp(alone.output.values.data(), gpu.output.values.data(), cpu.size() * sizeof(double)), 0);
      EXPECT_EQ(alone.output.bound, gpu.output.bound);
      EXPECT_EQ(alone.output.var, gpu.output.var);
    }
  }

};

// ---- the reference itself ------------------------------------------------------------------

TEST_F(GpuReferenceTest, PointwiseChainMatchesCpu) {
  for (const spec::Conv& c : shapes()) {
    spec::Problem p;
    p.conv = c;
    p.num_params = 1;
    p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
    expect_matches_cpu(p, 0.25, 1, MathMode::tf32);
    expect_matches_cpu(p, 0.25, 1, MathMode::fp32);
  }
}

TEST_F(GpuReferenceTest, ConvAloneMatchesCpu) {
  for (const spec::Conv& c : shapes()) {
    spec::Problem p;
    p.conv = c;
    expect_matches_cpu(p, 0.0, 1, MathMode::tf32);
    expect_matches_cpu(p, 0.0, 1, MathMode::fp32);
  }
}

TEST_F(GpuReferenceTest, EveryReductionMatchesCpu) {
  for (ReduceKind rk : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
    SCOPED_TRACE(spec::reduce_name(rk));
    for (const spec::Conv& c : shapes()) {
      spec::Problem p;
      p.conv = c;
      p.num_params = 1;
      p.pre = {op(OpKind::mul, {scalar(2.0)}), op(OpKind::add, {param(0)})};
      p.reduce = rk;
      p.post = {op(OpKind::add, {scalar(0.25)}), op(OpKind::tanh)};
      expect_matches_cpu(p);
      expect_matches_cpu(p, 0.25, 1, MathMode::fp32);
      p.pre.clear();  // the bare reduction too (kernelbench-32 has only mul before it)
      p.post.clear();
      expect_matches_cpu(p);
    }
  }
}

// Each op after a scale that spreads conv outputs over the op's interesting range; ops with
// a pole or a domain edge behind guards that keep the comparison well conditioned.
TEST_F(GpuReferenceTest, EveryOpMatchesCpu) {
  struct Case {
    std::string name;
    std::vector<spec::Op> ops;
  };
  const spec::Op abs = op(OpKind::abs), shift = op(OpKind::add, {scalar(0.5)});
  const std::vector<Case> cases = {
      {"add", {op(OpKind::add, {param(0)})}},
      {"sub", {op(OpKind::sub, {scalar(0.3)})}},
      {"rsub", {op(OpKind::rsub, {param(0)})}},
      {"mul", {op(OpKind::mul, {param(1)})}},
      {"div", {op(OpKind::div, {param(0)})}},
      {"rdiv", {abs, shift, op(OpKind::rdiv, {param(1)})}},
      {"min", {op(OpKind::min, {param(0)})}},
      {"max", {op(OpKind::max, {scalar(-0.1)})}},
      {"clamp", {op(OpKind::clamp, {scalar(-0.7), param(1)})}},
      {"relu", {op(OpKind::relu)}},
      {"leaky_relu", {op(OpKind::leaky_relu, {scalar(0.2)})}},
      {"leaky_relu default", {op(OpKind::leaky_relu)}},
      {"gelu", {op(OpKind::gelu)}},
      {"gelu_tanh", {op(OpKind::gelu_tanh)}},
      {"tanh", {op(OpKind::tanh)}},
      {"sigmoid", {op(OpKind::sigmoid)}},
      {"silu", {op(OpKind::silu)}},
      {"mish", {op(OpKind::mish)}},
      {"hardswish", {op(OpKind::hardswish)}},
      {"hardsigmoid", {op(OpKind::hardsigmoid)}},
      {"hardtanh", {op(OpKind::hardtanh, {scalar(-0.3), scalar(0.4)})}},
      {"hardtanh default", {op(OpKind::hardtanh)}},
      {"softplus", {op(OpKind::softplus, {scalar(2.0), scalar(3.0)})}},
      {"softplus default", {op(OpKind::softplus)}},
      {"exp", {op(OpKind::exp)}},
      {"log", {abs, shift, op(OpKind::log)}},
      {"log of negatives is NaN in both", {op(OpKind::neg), op(OpKind::abs), op(OpKind::neg), op(OpKind::log)}},
      {"abs", {op(OpKind::abs)}},
      {"neg", {op(OpKind::neg)}},
      {"square", {op(OpKind::square)}},
      {"sqrt", {abs, op(OpKind::sqrt)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    spec::Problem p;
    p.conv = shapes()[3];
    p.num_params = 2;
    p.pre = {op(OpKind::mul, {scalar(4.0)})};
    p.pre.insert(p.pre.end(), c.ops.begin(), c.ops.end());
    // No biases on breakpoints: softplus(2, 3) jumps at x = 1.5, where the two references'
    // last-bit differences in the conv could pick different branches.
    expect_matches_cpu(p, 0.0);
  }
}

// ---- compare -------------------------------------------------------------------------------

struct Planted {
  std::vector<double> ref;
  std::vector<float> bound, var;  // the tf32 rule's: a bound of 1e-3 everywhere, 1e-8 variance
  std::vector<float> out;         // NCHW
  uint64_t mismatches = 0, nonfinite = 0, first_bad = 0, unchecked = 0;
};

// out = float(ref) everywhere (well inside 1e-4, and inside the 1e-3 bound), then errors planted
// at known places that fail both rules alike (or pass both), plus, under tf32, one unchecked
// element holding garbage.
Planted plant(const spec::Problem& p, MathMode math) {
  Planted t;
  const auto count = size_t(p.out_elems());
  t.ref.resize(count);
  for (size_t i = 0; i < count; ++i) t.ref[i] = 3.0 * std::sin(double(i) * 0.37) + 0.01;
  t.out.assign(t.ref.begin(), t.ref.end());
  t.bound.assign(count, 1e-3f);
  t.var.assign(count, 1e-8f);
  auto set = [&](size_t i, double r, float o) {
    t.ref[i] = r;
    t.out[i] = o;
  };
  t.out[7] += 1.0f;                            // too far: mismatch
  t.out[count - 1] -= 0.01f;                   // last element: mismatch
  t.out[20] = t.out[20] + 2e-5f;               // inside 1e-4 + 1e-4*|ref| and the bound: match
  t.out[30] = std::numeric_limits<float>::quiet_NaN();  // unwritten sentinel: nonfinite
  t.out[31] = std::numeric_limits<float>::infinity();   // overflow: nonfinite
  set(40, kNaN, std::numeric_limits<float>::quiet_NaN());  // NaN in both: match
  set(41, kInf, std::numeric_limits<float>::infinity());   // equal infinities: match
  set(42, -kInf, std::numeric_limits<float>::infinity());  // unequal infinities: mismatch
  set(43, kNaN, 1.0f);                                     // NaN on the reference side only: mismatch
  t.mismatches = 6;
  t.nonfinite = 2;
  t.first_bad = 7;
  if (math == MathMode::tf32) {
    t.bound[50] = std::numeric_limits<float>::infinity();  // ill-conditioned: never a mismatch
    t.out[50] = std::numeric_limits<float>::quiet_NaN();
    t.unchecked = 1;
  }
  return t;
}

std::vector<float> to_nhwc(const std::vector<float>& nchw, int64_t n_img, int64_t c_out, int64_t pq) {
  std::vector<float> nhwc(nchw.size());
  for (int64_t n = 0; n < n_img; ++n)
    for (int64_t c = 0; c < c_out; ++c)
      for (int64_t i = 0; i < pq; ++i) nhwc[size_t((n * pq + i) * c_out + c)] = nchw[size_t((n * c_out + c) * pq + i)];
  return nhwc;
}

TEST_F(GpuReferenceTest, CompareCountsPlantedErrorsExactly) {
  for (MathMode math : {MathMode::fp32, MathMode::tf32}) {
    for (bool reduce : {false, true}) {
      spec::Problem p;
      p.conv = shapes()[0];
      if (reduce) p.reduce = ReduceKind::max;
      SCOPED_TRACE(std::string(math_mode_name(math)) + (reduce ? " reduced output" : " full output"));
      GpuReference ref(p, arch_, math);
      const Planted t = plant(p, math);
      const GpuErrorStats cpu =
          compare_bounded(t.out.data(), t.ref.data(), t.bound.data(), t.var.data(), t.ref.size(), math);
      const RefArrays answer = upload_answer(t.ref, t.bound, t.var);  // fp32 reads var too (6 sd: 6e-4 here)
      for (bool nhwc : {false, true}) {
        SCOPED_TRACE(nhwc ? "NHWC out" : "NCHW out");
        const gpu::DeviceBuffer out =
            upload(nhwc ? to_nhwc(t.out, p.conv.n, p.out_channels(), p.conv.p() * p.conv.q()) : t.out);
        const GpuErrorStats s = ref.compare(out.ptr(), nhwc, answer, stream());
        EXPECT_EQ(s.mismatches, t.mismatches);
        EXPECT_EQ(s.nonfinite, t.nonfinite);
        EXPECT_EQ(s.unchecked, t.unchecked);
        EXPECT_EQ(s.first_bad, t.first_bad);
        EXPECT_EQ(s.count, t.ref.size());
        EXPECT_FALSE(s.ok());
        EXPECT_FALSE(judge(s, math).ok);
        EXPECT_EQ(s.max_abs, kInf);  // out[31]
        EXPECT_EQ(s.worst_ratio, kInf);
        expect_same_figures(cpu, s);
        if (math == MathMode::fp32) {
          EXPECT_EQ(s.rel_l2_limit, 0.0);
          // The fp32 rule is the old compare's (KernelBench's allclose).
          const ErrorStats old = reference::compare(t.out.data(), t.ref.data(), int64_t(t.ref.size()), 1e-4, 1e-4);
          EXPECT_EQ(uint64_t(old.mismatches), s.mismatches);
          EXPECT_NEAR(old.rel_l2, s.rel_l2, 1e-12 * old.rel_l2);
        } else {
          EXPECT_GT(s.rel_l2_limit, 0.0);
        }
      }
    }
  }
}

// The conv-alone answer of a problem with a reduction has K channels: compare takes its layout
// from the answer, in both layouts.
TEST_F(GpuReferenceTest, CompareTakesTheConvAnswersChannels) {
  spec::Problem p;
  p.conv = shapes()[0];
  p.pre = {op(OpKind::mul, {scalar(2.0)})};
  p.reduce = ReduceKind::min;
  const ProblemData d = make_problem_data(p, 6);
  GpuReference ref(p, arch_, MathMode::tf32);
  gpu::DeviceBuffer x = upload(d.x), w = upload(d.w), chan = upload(d.chan);
  const RefAnswer a = ref.compute(x.ptr(), w.ptr(), chan.ptr(), true, stream());
  ASSERT_TRUE(a.conv.has_value());
  EXPECT_EQ(a.conv->count, uint64_t(p.conv.conv_out_elems()));
  EXPECT_EQ(a.output.count, uint64_t(p.out_elems()));
  const std::vector<double> y = conv2d_nchw(p.conv, d.x.data(), d.w.data(), nullptr);
  const std::vector<float> y32(y.begin(), y.end());
  for (bool nhwc : {false, true}) {
    const gpu::DeviceBuffer out = upload(nhwc ? to_nhwc(y32, p.conv.n, p.conv.k, p.conv.p() * p.conv.q()) : y32);
    const GpuErrorStats s = ref.compare(out.ptr(), nhwc, *a.conv, stream());
    EXPECT_TRUE(judge(s, MathMode::tf32).ok) << judge(s, MathMode::tf32).reason;
    EXPECT_EQ(s.count, y.size());
    // fp32 rounding of the CPU conv, against the GPU's (which may differ in the last double bits).
    EXPECT_LE(s.max_rel, 0x1p-24 * (1 + 1e-9));
  }
}

TEST_F(GpuReferenceTest, CompareFiguresMatchCpuOnFiniteErrors) {
  for (MathMode math : {MathMode::fp32, MathMode::tf32}) {
    SCOPED_TRACE(math_mode_name(math));
    spec::Problem p;
    p.conv = shapes()[3];
    GpuReference ref(p, arch_, math);
    const ProblemData d = make_problem_data(p, 5);
    const BoundedReference r = reference_with_bounds(p, d, math);
    std::vector<float> out(r.values.begin(), r.values.end());
    for (size_t i = 0; i < out.size(); i += 97) out[i] *= 1.01f;  // beyond either tolerance wherever |ref| > ~0.01
    const GpuErrorStats cpu = compare_bounded(out.data(), r.values.data(), r.bound.data(), r.var.data(), out.size(), math);
    const RefArrays answer = upload_answer(r.values, r.bound, r.var);
    const gpu::DeviceBuffer out_d = upload(out);
    const GpuErrorStats s = ref.compare(out_d.ptr(), false, answer, stream());
    EXPECT_GT(s.mismatches, 0u);
    EXPECT_EQ(s.nonfinite, 0u);
    expect_same_figures(cpu, s);

    const gpu::DeviceBuffer exact = upload(std::vector<float>(r.values.begin(), r.values.end()));
    const GpuErrorStats e = ref.compare(exact.ptr(), false, answer, stream());
    EXPECT_TRUE(e.ok());
    EXPECT_TRUE(judge(e, math).ok) << judge(e, math).reason;
    EXPECT_EQ(e.first_bad, GpuErrorStats::kNone);
    EXPECT_LE(e.max_rel, 0x1p-24);  // fp32 rounding of the reference, nothing else
  }
}

// The verification protocol end to end: a NaN-filled output that a "kernel" writes only in part.
TEST_F(GpuReferenceTest, UnwrittenSentinelsAreCaught) {
  for (MathMode math : {MathMode::fp32, MathMode::tf32}) {
    SCOPED_TRACE(math_mode_name(math));
    spec::Problem p;
    p.conv = shapes()[0];
    GpuReference ref(p, arch_, math);
    const ProblemData d = make_problem_data(p, 3);
    const BoundedReference r = reference_with_bounds(p, d, math);
    const RefArrays answer = upload_answer(r.values, r.bound, r.var);
    gpu::DeviceBuffer out(r.values.size() * sizeof(float));
    ref.fill_u32(out.ptr(), r.values.size(), kNaNSentinel, stream());
    const std::vector<float> half(r.values.begin(), r.values.begin() + std::ptrdiff_t(r.values.size() / 2));
    out.upload(std::span<const float>(half), 0, stream());
    const GpuErrorStats s = ref.compare(out.ptr(), false, answer, stream());
    EXPECT_EQ(s.nonfinite, r.values.size() - half.size());
    EXPECT_EQ(s.mismatches, r.values.size() - half.size());
    EXPECT_EQ(s.first_bad, half.size());
    const Verdict v = judge(s, math);
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.reason.find("unwritten"), std::string::npos) << v.reason;
  }
}

// ---- the TF32 rule end to end ----------------------------------------------------------------

// A CPU-emulated TF32 pipeline (tests/tf32_emulation.hpp), uploaded as a candidate's output: the
// device's tf32 comparison against the device's own reference passes it, in both layouts, with
// the CPU twin's figures; each planted bug fails; a bf16 output fails the rel-L2 limit.
TEST_F(GpuReferenceTest, Tf32CompareJudgesEmulatedOutputs) {
  for (const testing::RuleCase& c : testing::rule_cases()) {
    SCOPED_TRACE(c.name);
    const spec::Problem& p = c.problem;
    const ProblemData d = make_problem_data(p, testing::kRuleCaseSeed);
    GpuReference ref(p, arch_, MathMode::tf32);
    gpu::DeviceBuffer x = upload(d.x), w = upload(d.w), chan = upload(d.chan.empty() ? std::vector<float>{0.0f} : d.chan);
    const RefAnswer a = ref.compute(x.ptr(), w.ptr(), chan.ptr(), false, stream());
    const std::vector<float> out = testing::rule_case_output(c, d);
    const BoundedReference twin = reference_with_bounds(p, d);
    const GpuErrorStats cpu =
        compare_bounded(out.data(), twin.values.data(), twin.bound.data(), twin.var.data(), out.size(), MathMode::tf32);
    EXPECT_EQ(judge(cpu, MathMode::tf32).ok, c.correct());
    for (bool nhwc : {false, true}) {
      SCOPED_TRACE(nhwc ? "NHWC out" : "NCHW out");
      const gpu::DeviceBuffer out_d =
          upload(nhwc ? to_nhwc(out, p.conv.n, p.out_channels(), p.conv.p() * p.conv.q()) : out);
      const GpuErrorStats s = ref.compare(out_d.ptr(), nhwc, a.output, stream());
      const Verdict v = judge(s, MathMode::tf32);
      EXPECT_EQ(v.ok, c.correct()) << v.reason;
      EXPECT_EQ(s.mismatches, cpu.mismatches);
      EXPECT_EQ(s.nonfinite, cpu.nonfinite);
      EXPECT_EQ(s.unchecked, cpu.unchecked);
      EXPECT_NEAR(s.rel_l2, cpu.rel_l2, 1e-6 * cpu.rel_l2);
      EXPECT_NEAR(s.rel_l2_limit, cpu.rel_l2_limit, 1e-4 * cpu.rel_l2_limit);
      if (c.bf16) {
        EXPECT_GT(s.rel_l2, s.rel_l2_limit);
      }
      std::printf("  %-34s %s: %s\n", c.name, nhwc ? "nhwc" : "nchw", v.ok ? "ok" : v.reason.c_str());
    }
  }
}

// ---- fill, guards, spin --------------------------------------------------------------------
// Host twin of ft_fill_uniform (ref_fill.cu): element i is a function of (seed, i) only.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
float host_uniform(uint64_t seed, uint64_t i, float lo, float hi) {
  const uint64_t gamma = 0x9E3779B97F4A7C15ull;
  const uint64_t top24 = mix(mix(seed + gamma) + (i + 1) * gamma) >> 40;
  const double u = double(2 * top24 + 1) * 0x1p-25;
  auto v = float(double(lo) + (double(hi) - double(lo)) * u);
  if (v >= hi) v = std::nextafter(hi, lo);
  if (v == 0.0f) v = hi * 0x1p-25f;
  return v;
}

TEST_F(GpuReferenceTest, FillUniformIsDeterministicInRangeAndNeverZero) {
  spec::Problem p;
  GpuReference ref(p, arch_, MathMode::fp32);
  const size_t n = (size_t(1) << 20) + 3;  // not a multiple of the grid
  gpu::DeviceBuffer a(n * sizeof(float)), b(n * sizeof(float)), c(n * sizeof(float));
  const std::vector<std::pair<float, float>> ranges = {{0.0f, 1.0f}, {-1.0f, 1.0f}, {-0.5f, 2.0f}, {0.0f, 1e-3f}, {-3.0f, -2.0f}};
  for (auto [lo, hi] : ranges) {
    SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
    ref.fill_uniform(a.ptr(), n, 42, lo, hi, stream());
    ref.fill_uniform(b.ptr(), n, 42, lo, hi, stream());
    ref.fill_uniform(c.ptr(), n, 43, lo, hi, stream());
    const auto va = a.download<float>(stream()), vb = b.download<float>(stream()), vc = c.download<float>(stream());
    EXPECT_EQ(va, vb);
    size_t same = 0, out_of_range = 0, zeros = 0;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      same += va[i] == vc[i];
      out_of_range += !(va[i] >= lo && va[i] < hi);
      zeros += va[i] == 0.0f;
      sum += va[i];
    }
    EXPECT_LT(same, n / 100) << "seeds 42 and 43 draw nearly the same values";
    EXPECT_EQ(out_of_range, 0u);
    EXPECT_EQ(zeros, 0u);
    EXPECT_NEAR(sum / double(n), 0.5 * (double(lo) + double(hi)), 0.01 * (double(hi) - double(lo)));
    for (size_t i : {size_t(0), size_t(1), size_t(12345), n - 1}) EXPECT_EQ(va[i], host_uniform(42, i, lo, hi)) << i;
  }
  EXPECT_THROW(ref.fill_uniform(a.ptr(), n, 1, 1.0f, 1.0f, stream()), InputError);
}

TEST_F(GpuReferenceTest, FillAndCheckU32CountChangedWords) {
  spec::Problem p;
  GpuReference ref(p, arch_, MathMode::tf32);
  const size_t n = 100003;
  gpu::DeviceBuffer guard(n * sizeof(uint32_t));
  ref.fill_u32(guard.ptr(), n, 0xdeadbeefu, stream());
  EXPECT_EQ(ref.check_u32(guard.ptr(), n, 0xdeadbeefu, stream()), 0u);
  EXPECT_EQ(ref.check_u32(guard.ptr(), n, 0u, stream()), n);
  const uint32_t stray = 0;
  for (size_t i : {size_t(0), size_t(5000), n - 1}) guard.copy_from_host(&stray, sizeof(stray), i * 4, stream());
  EXPECT_EQ(ref.check_u32(guard.ptr(), n, 0xdeadbeefu, stream()), 3u);
  EXPECT_EQ(ref.check_u32(guard.ptr() + 4, n - 2, 0xdeadbeefu, stream()), 1u);  // a sub-range
}

// spin(50 us) holds the stream for at least 40 us of device time between two events.
TEST_F(GpuReferenceTest, SpinHoldsTheStream) {
  spec::Problem p;
  GpuReference ref(p, arch_, MathMode::tf32);
  gpu::Event start, stop;
  ref.spin(1.0, stream());  // loaded and warm
  for (int i = 0; i < 3; ++i) {
    start.record(stream());
    ref.spin(50.0, stream());
    stop.record(stream());
    const float ms = gpu::Event::elapsed_ms(start, stop);
    EXPECT_GE(ms, 0.040f);
    EXPECT_LT(ms, 5.0f);
  }
  start.record(stream());
  ref.spin(0.0, stream());  // nothing
  stop.record(stream());
  EXPECT_LT(gpu::Event::elapsed_ms(start, stop), 0.040f);
}

// ---- full size -----------------------------------------------------------------------------

// Inputs drawn on the device like make_problem_data draws them on the host.
struct DeviceInputs {
  gpu::DeviceBuffer x, w, chan;
};
DeviceInputs draw_inputs(GpuReference& ref, const spec::Problem& p, uint64_t seed, CUstream s) {
  const spec::Conv& c = p.conv;
  DeviceInputs in{gpu::DeviceBuffer(size_t(c.input_elems()) * 4), gpu::DeviceBuffer(size_t(c.weight_elems()) * 4),
                  gpu::DeviceBuffer(std::max<size_t>(1, size_t(chan_elems(p))) * 4)};
  const auto b = float(1.0 / std::sqrt(double(c.c * c.r * c.s)));
  ref.fill_uniform(in.x.ptr(), size_t(c.input_elems()), seed, 0.0f, 1.0f, s);
  ref.fill_uniform(in.w.ptr(), size_t(c.weight_elems()), seed + 1, -b, b, s);
  if (c.bias) ref.fill_uniform(in.chan.ptr(), size_t(c.k), seed + 2, -b, b, s);
  for (int i = 0; i < p.num_params; ++i) {
    ref.fill_uniform(in.chan.ptr() + size_t(chan_index(p, i)) * 4, size_t(c.k), seed + 3 + uint64_t(i), -1.0f, 1.0f, s);
  }
  return in;
}

// Image n of the full-size reference, recomputed on the CPU (values, and bounds when the answer
// has them) from the device's inputs.
void expect_image_matches_cpu(const spec::Problem& p, const DeviceInputs& in, const RefArrays& answer, int64_t n,
                              CUstream s) {
  SCOPED_TRACE("image " + std::to_string(n));
  spec::Problem one = p;
  one.conv.n = 1;
  ProblemData d;
  d.x.resize(size_t(one.conv.input_elems()));
  in.x.copy_to_host(d.x.data(), d.x.size() * 4, size_t(n) * d.x.size() * 4, s);
  d.w = in.w.download<float>(s);
  d.chan = in.chan.download<float>(s);
  d.chan.resize(size_t(chan_elems(p)));
  const size_t per_image = size_t(one.out_elems());
  std::vector<double> gpu(per_image);
  answer.values.copy_to_host(gpu.data(), per_image * 8, size_t(n) * per_image * 8, s);
  if (answer.bound.empty()) {
    expect_values_close(gpu, reference_output(one, d), "values");
    return;
  }
  const BoundedReference twin = reference_with_bounds(one, d);
  expect_values_close(gpu, twin.values, "values");
  std::vector<float> bound(per_image), var(per_image);
  answer.bound.copy_to_host(bound.data(), per_image * 4, size_t(n) * per_image * 4, s);
  answer.var.copy_to_host(var.data(), per_image * 4, size_t(n) * per_image * 4, s);
  expect_bounds_close(bound, twin.bound, "bound");
  expect_bounds_close(var, twin.var, "variance");
}

bool enough_memory(size_t bytes) { return size_t(gpu::device_memory().free_bytes) > bytes + (size_t(2) << 30); }

// kernelbench-31 and -32 at full size, as the worker runs them (tf32, with the conv-alone
// answer): the reference must take about a second or less.
TEST_F(GpuReferenceTest, FullSizePresetsAreFastAndRight) {
  spec::Problem kb31;
  kb31.conv = conv(128, 64, 128, 128, 128, 3, 3);
  kb31.num_params = 1;
  kb31.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
  spec::Problem kb32;
  kb32.conv = conv(64, 64, 256, 256, 128, 3, 3);
  kb32.pre = {op(OpKind::mul, {scalar(2.0)})};
  kb32.reduce = ReduceKind::min;
  for (const spec::Problem* p : {&kb31, &kb32}) {
    const bool reduce = p->reduce.has_value();
    const char* name = reduce ? "kernelbench-32" : "kernelbench-31";
    SCOPED_TRACE(name);
    const size_t bytes = size_t(p->conv.input_elems()) * 4 + GpuReference::answer_bytes(*p, true) +
                         size_t(p->out_elems()) * 4;
    if (!enough_memory(bytes)) GTEST_SKIP() << "needs " << bytes / (1 << 20) << " MiB of free device memory";
    GpuReference ref(*p, arch_, MathMode::tf32);
    for (const RefProgramInfo& prog : ref.programs()) {
      std::printf("  NVRTC %-16s %7.1f ms, %d registers, %d spill stores\n", prog.name.c_str(), prog.compile_ms,
                  prog.registers, prog.spill_stores);
    }
    const DeviceInputs in = draw_inputs(ref, *p, 11, stream());
    (void)ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), true, stream());  // warm-up
    gpu::Event start, stop;
    start.record(stream());
    const RefAnswer answer = ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), true, stream());
    stop.record(stream());
    const float ms = gpu::Event::elapsed_ms(start, stop);
    std::printf("  reference %s (tf32, bounds, with the conv answer): %.1f ms (%.2f TFLOP/s fp64 of the conv)\n",
                name, ms, p->conv.flops() / (double(ms) * 1e9));
    EXPECT_LT(ms, 1500.0f);
    ASSERT_TRUE(answer.conv.has_value());

    expect_image_matches_cpu(*p, in, answer.output, 0, stream());
    expect_image_matches_cpu(*p, in, answer.output, p->conv.n - 1, stream());
    if (reduce) {  // kb31's conv answer is checked through its output: the same pass made both
      spec::Problem conv_only;
      conv_only.conv = p->conv;
      conv_only.conv.bias = false;
      expect_image_matches_cpu(conv_only, in, *answer.conv, p->conv.n - 1, stream());
    }

    gpu::DeviceBuffer out(size_t(p->out_elems()) * 4);
    ref.fill_u32(out.ptr(), size_t(p->out_elems()), kNaNSentinel, stream());
    start.record(stream());
    const GpuErrorStats s = ref.compare(out.ptr(), false, answer.output, stream());
    stop.record(stream());
    std::printf("  compare (tf32): %.2f ms\n", double(gpu::Event::elapsed_ms(start, stop)));
    EXPECT_EQ(s.nonfinite, uint64_t(p->out_elems()));
    EXPECT_EQ(s.unchecked, 0u);
    EXPECT_FALSE(judge(s, MathMode::tf32).ok);
  }
}

// Offsets past 2^31 elements: a 1x1 conv whose input and output have 2.18e9 elements, with the
// tf32 bounds (in place: values, bounds and variances all indexed past 2^31).
TEST_F(GpuReferenceTest, IndexesPast2To31Elements) {
  spec::Problem p;
  p.conv = conv(520, 1, 2048, 2048, 1, 1, 1);
  p.pre = {op(OpKind::mul, {scalar(3.0)})};
  ASSERT_GT(p.out_elems(), int64_t(1) << 31);
  const size_t bytes = size_t(p.conv.input_elems()) * 4 + GpuReference::answer_bytes(p, false) +
                       size_t(p.out_elems()) * 4;
  if (!enough_memory(bytes)) GTEST_SKIP() << "needs " << bytes / (1 << 20) << " MiB of free device memory";
  GpuReference ref(p, arch_, MathMode::tf32);
  const DeviceInputs in = draw_inputs(ref, p, 21, stream());
  const RefAnswer answer = ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), false, stream());
  expect_image_matches_cpu(p, in, answer.output, p.conv.n - 1, stream());

  gpu::DeviceBuffer out(size_t(p.out_elems()) * 4);
  ref.fill_u32(out.ptr(), size_t(p.out_elems()), kNaNSentinel, stream());
  EXPECT_EQ(ref.check_u32(out.ptr(), size_t(p.out_elems()), kNaNSentinel, stream()), 0u);
  const GpuErrorStats s = ref.compare(out.ptr(), false, answer.output, stream());
  EXPECT_EQ(s.nonfinite, uint64_t(p.out_elems()));  // a count past 2^31
  EXPECT_EQ(s.count, uint64_t(p.out_elems()));
  EXPECT_EQ(s.first_bad, 0u);
}

}  // namespace
}  // namespace fusetune::reference
