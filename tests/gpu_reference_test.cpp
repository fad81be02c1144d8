// GPU tests of GpuReference: the float64 reference kernels agree with the CPU reference
// (reference_output) on the same inputs, for awkward shapes, every op and every reduction;
// compare() counts planted errors exactly in NCHW and NHWC; the fill and guard kernels do
// what they promise; full-size problems run fast enough and index past 2^31 elements.
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
#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/event.hpp"
#include "gpu/stream.hpp"
#include "reference/compare.hpp"
#include "reference/cpu_reference.hpp"
#include "reference/gpu_reference.hpp"
#include "reference/op_math.hpp"
#include "reference/problem_data.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using spec::ReduceKind;

constexpr uint32_t kNaNSentinel = 0x7fc00000u;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

spec::Operand scalar(double v) { return {false, v, -1}; }
spec::Operand param(int i) { return {true, 0.0, i}; }
spec::Op op(OpKind kind, std::vector<spec::Operand> args = {}) { return {kind, std::move(args)}; }

spec::Conv conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s) {
  spec::Conv cv;
  cv.n = n, cv.c = c, cv.h = h, cv.w = w, cv.k = k, cv.r = r, cv.s = s;
  return cv;
}

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

class GpuReferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    ctx_.emplace(0);
    stream_.emplace();
    arch_ = gpu::query_device(0).limits.arch_flag();
  }

  CUstream stream() const { return stream_->get(); }

  // The GPU reference of `p` on host inputs `d`, downloaded. alias: the epilogue in place.
  std::vector<double> gpu_output(const GpuReference& ref, const ProblemData& d, bool alias) {
    const spec::Problem& p = ref.problem();
    gpu::DeviceBuffer x = upload(d.x), w = upload(d.w), chan = upload(d.chan);
    gpu::DeviceBuffer y64(GpuReference::y64_bytes(p));
    gpu::DeviceBuffer separate;
    if (!alias) separate = gpu::DeviceBuffer(GpuReference::ref64_bytes(p));
    const gpu::DeviceBuffer& ref64 = alias ? y64 : separate;
    y64.fill_u32(kNaNSentinel, stream());  // an output the kernels skip stays NaN and fails
    if (!alias) separate.fill_u32(kNaNSentinel, stream());
    ref.compute(x.ptr(), w.ptr(), chan.ptr(), y64.ptr(), ref64.ptr(), stream());
    std::vector<double> out(size_t(p.out_elems()));
    ref64.copy_to_host(out.data(), out.size() * sizeof(double), 0, stream());
    return out;
  }

  // GPU == CPU to 1e-12 relative (absolute below magnitude 1: conv outputs cross zero, and the
  // two references add the taps in different orders). Both NaN, or equal, always match.
  void expect_matches_cpu(const spec::Problem& p, double threshold_fraction = 0.25, uint64_t seed = 1) {
    SCOPED_TRACE(describe(p.conv));
    const ProblemData d = make_problem_data(p, seed, threshold_fraction);
    const std::vector<double> cpu = reference_output(p, d);
    const GpuReference ref(p, arch_);
    const std::vector<double> gpu = gpu_output(ref, d, false);
    ASSERT_EQ(gpu.size(), cpu.size());
    int64_t bad = 0;
    for (size_t i = 0; i < cpu.size(); ++i) {
      const double c = cpu[i], g = gpu[i];
      if ((std::isnan(c) && std::isnan(g)) || c == g) continue;
      if (std::fabs(g - c) <= 1e-12 * std::max(std::fabs(c), 1.0)) continue;
      if (bad++ < 5) ADD_FAILURE() << "element " << i << ": gpu " << g << " cpu " << c;
    }
    EXPECT_EQ(bad, 0) << "of " << cpu.size();
    if (!p.reduce) {  // in place gives the same bits
      EXPECT_EQ(std::memcmp(gpu_output(ref, d, true).data(), gpu.data(), gpu.size() * sizeof(double)), 0);
    }
  }

  std::optional<gpu::Context> ctx_;  // destroyed last
  std::optional<gpu::Stream> stream_;
  std::string arch_;
};

// ---- the reference itself ------------------------------------------------------------------

TEST_F(GpuReferenceTest, PointwiseChainMatchesCpu) {
  for (const spec::Conv& c : shapes()) {
    spec::Problem p;
    p.conv = c;
    p.num_params = 1;
    p.pre = {op(OpKind::min, {scalar(0.5)}), op(OpKind::add, {param(0)}), op(OpKind::mul, {scalar(2.0)})};
    expect_matches_cpu(p);
  }
}

TEST_F(GpuReferenceTest, ConvAloneMatchesCpu) {
  for (const spec::Conv& c : shapes()) {
    spec::Problem p;
    p.conv = c;
    expect_matches_cpu(p, 0.0);
  }
}

TEST_F(GpuReferenceTest, EveryReductionMatchesCpu) {
  for (ReduceKind rk : {ReduceKind::min, ReduceKind::max, ReduceKind::sum, ReduceKind::mean}) {
    SCOPED_TRACE(reduce_name(rk));
    for (const spec::Conv& c : shapes()) {
      spec::Problem p;
      p.conv = c;
      p.num_params = 1;
      p.pre = {op(OpKind::mul, {scalar(2.0)}), op(OpKind::add, {param(0)})};
      p.reduce = rk;
      p.post = {op(OpKind::add, {scalar(0.25)}), op(OpKind::tanh)};
      expect_matches_cpu(p);
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
  std::vector<float> out;  // NCHW
  uint64_t mismatches = 0, nonfinite = 0, first_bad = 0;
};

// out = float(ref) everywhere (well inside 1e-4), then errors planted at known places.
Planted plant(const spec::Problem& p) {
  Planted t;
  const auto count = size_t(p.out_elems());
  t.ref.resize(count);
  for (size_t i = 0; i < count; ++i) t.ref[i] = 3.0 * std::sin(double(i) * 0.37) + 0.01;
  t.out.assign(t.ref.begin(), t.ref.end());
  auto set = [&](size_t i, double r, float o) {
    t.ref[i] = r;
    t.out[i] = o;
  };
  t.out[7] += 1.0f;                            // too far: mismatch
  t.out[count - 1] -= 0.001f;                  // last element: mismatch
  t.out[20] = t.out[20] + 2e-5f;               // inside 1e-4 + 1e-4*|ref|: match
  t.out[30] = std::numeric_limits<float>::quiet_NaN();  // unwritten sentinel: nonfinite
  t.out[31] = std::numeric_limits<float>::infinity();   // overflow: nonfinite
  set(40, kNaN, std::numeric_limits<float>::quiet_NaN());  // NaN in both: match
  set(41, kInf, std::numeric_limits<float>::infinity());   // equal infinities: match
  set(42, -kInf, std::numeric_limits<float>::infinity());  // unequal infinities: mismatch
  set(43, kNaN, 1.0f);                                     // NaN on the reference side only: mismatch
  t.mismatches = 6;
  t.nonfinite = 2;
  t.first_bad = 7;
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
  for (bool reduce : {false, true}) {
    spec::Problem p;
    p.conv = shapes()[0];
    if (reduce) p.reduce = ReduceKind::max;
    SCOPED_TRACE(reduce ? "reduced output" : "full output");
    GpuReference ref(p, arch_);
    const Planted t = plant(p);
    const ErrorStats cpu = reference::compare(t.out.data(), t.ref.data(), int64_t(t.ref.size()), 1e-4, 1e-4);
    const gpu::DeviceBuffer ref64 = upload(t.ref);
    for (bool nhwc : {false, true}) {
      SCOPED_TRACE(nhwc ? "NHWC out" : "NCHW out");
      const gpu::DeviceBuffer out =
          upload(nhwc ? to_nhwc(t.out, p.conv.n, p.out_channels(), p.conv.p() * p.conv.q()) : t.out);
      const GpuErrorStats s = ref.compare(out.ptr(), nhwc, ref64.ptr(), 1e-4, 1e-4, stream());
      EXPECT_EQ(s.mismatches, t.mismatches);
      EXPECT_EQ(s.nonfinite, t.nonfinite);
      EXPECT_EQ(s.first_bad, t.first_bad);
      EXPECT_FALSE(s.ok());
      // Same figures as the CPU twin (max is order-free; the L2 sums add in another order).
      EXPECT_EQ(uint64_t(cpu.mismatches), s.mismatches);
      EXPECT_EQ(uint64_t(cpu.first_bad), s.first_bad);
      EXPECT_EQ(cpu.max_abs, s.max_abs);  // infinite: out[31]
      EXPECT_EQ(cpu.max_rel, s.max_rel);
      EXPECT_NEAR(cpu.rel_l2, s.rel_l2, 1e-12 * cpu.rel_l2);
    }
  }
}

TEST_F(GpuReferenceTest, CompareFiguresMatchCpuOnFiniteErrors) {
  spec::Problem p;
  p.conv = shapes()[3];
  GpuReference ref(p, arch_);
  const ProblemData d = make_problem_data(p, 5);
  const std::vector<double> r = reference_output(p, d);
  std::vector<float> out(r.begin(), r.end());
  for (size_t i = 0; i < out.size(); i += 97) out[i] *= 1.01f;  // beyond the tolerance wherever |ref| > ~0.01
  const ErrorStats cpu = reference::compare(out.data(), r.data(), int64_t(r.size()), 1e-4, 1e-4);
  const gpu::DeviceBuffer ref64 = upload(r), out_d = upload(out);
  const GpuErrorStats s = ref.compare(out_d.ptr(), false, ref64.ptr(), 1e-4, 1e-4, stream());
  EXPECT_GT(s.mismatches, 0u);
  EXPECT_EQ(uint64_t(cpu.mismatches), s.mismatches);
  EXPECT_EQ(uint64_t(cpu.first_bad), s.first_bad);
  EXPECT_EQ(s.nonfinite, 0u);
  EXPECT_EQ(cpu.max_abs, s.max_abs);
  EXPECT_EQ(cpu.max_rel, s.max_rel);
  EXPECT_NEAR(cpu.rel_l2, s.rel_l2, 1e-12 * cpu.rel_l2);

  const gpu::DeviceBuffer exact = upload(std::vector<float>(r.begin(), r.end()));
  const GpuErrorStats e = ref.compare(exact.ptr(), false, ref64.ptr(), 1e-4, 1e-4, stream());
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(e.first_bad, GpuErrorStats::kNone);
  EXPECT_LE(e.max_rel, 0x1p-24);  // fp32 rounding of the reference, nothing else
}

// The verification protocol end to end: a NaN-filled output that a "kernel" writes only in part.
TEST_F(GpuReferenceTest, UnwrittenSentinelsAreCaught) {
  spec::Problem p;
  p.conv = shapes()[0];
  GpuReference ref(p, arch_);
  const ProblemData d = make_problem_data(p, 3);
  const std::vector<double> r = reference_output(p, d);
  const gpu::DeviceBuffer ref64 = upload(r);
  gpu::DeviceBuffer out(r.size() * sizeof(float));
  ref.fill_u32(out.ptr(), r.size(), kNaNSentinel, stream());
  const std::vector<float> half(r.begin(), r.begin() + std::ptrdiff_t(r.size() / 2));
  out.upload(std::span<const float>(half), 0, stream());
  const GpuErrorStats s = ref.compare(out.ptr(), false, ref64.ptr(), 1e-4, 1e-4, stream());
  EXPECT_EQ(s.nonfinite, r.size() - half.size());
  EXPECT_EQ(s.mismatches, r.size() - half.size());
  EXPECT_EQ(s.first_bad, half.size());
}

// ---- fill and guards -----------------------------------------------------------------------

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
  GpuReference ref(p, arch_);
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
  GpuReference ref(p, arch_);
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

// ---- full size -----------------------------------------------------------------------------

// Inputs drawn on the device like make_problem_data draws them on the host.
struct DeviceInputs {
  gpu::DeviceBuffer x, w, chan;
};
DeviceInputs draw_inputs(GpuReference& ref, const spec::Problem& p, uint64_t seed, CUstream s) {
  const spec::Conv& c = p.conv;
  DeviceInputs in{gpu::DeviceBuffer(size_t(c.input_elems()) * 4), gpu::DeviceBuffer(size_t(c.weight_elems()) * 4),
                  gpu::DeviceBuffer(size_t(chan_elems(p)) * 4)};
  const auto b = float(1.0 / std::sqrt(double(c.c * c.r * c.s)));
  ref.fill_uniform(in.x.ptr(), size_t(c.input_elems()), seed, 0.0f, 1.0f, s);
  ref.fill_uniform(in.w.ptr(), size_t(c.weight_elems()), seed + 1, -b, b, s);
  if (c.bias) ref.fill_uniform(in.chan.ptr(), size_t(c.k), seed + 2, -b, b, s);
  for (int i = 0; i < p.num_params; ++i) {
    ref.fill_uniform(in.chan.ptr() + size_t(chan_index(p, i)) * 4, size_t(c.k), seed + 3 + uint64_t(i), -1.0f, 1.0f, s);
  }
  return in;
}

// Image n of the full-size reference, recomputed on the CPU from the device's inputs.
void expect_image_matches_cpu(const spec::Problem& p, const DeviceInputs& in, const gpu::DeviceBuffer& ref64,
                              int64_t n, CUstream s) {
  SCOPED_TRACE("image " + std::to_string(n));
  spec::Problem one = p;
  one.conv.n = 1;
  ProblemData d;
  d.x.resize(size_t(one.conv.input_elems()));
  in.x.copy_to_host(d.x.data(), d.x.size() * 4, size_t(n) * d.x.size() * 4, s);
  d.w = in.w.download<float>(s);
  d.chan = in.chan.download<float>(s);
  const std::vector<double> cpu = reference_output(one, d);
  std::vector<double> gpu(cpu.size());
  ref64.copy_to_host(gpu.data(), gpu.size() * 8, size_t(n) * gpu.size() * 8, s);
  int64_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!(std::fabs(gpu[i] - cpu[i]) <= 1e-12 * std::max(std::fabs(cpu[i]), 1.0)) && bad++ < 5) {
      ADD_FAILURE() << "element " << i << ": gpu " << gpu[i] << " cpu " << cpu[i];
    }
  }
  EXPECT_EQ(bad, 0);
}

bool enough_memory(size_t bytes) { return size_t(gpu::device_memory().free_bytes) > bytes + (size_t(2) << 30); }

// kernelbench-31 and -32 at full size: the reference must take about a second or less.
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
    SCOPED_TRACE(reduce ? "kernelbench-32" : "kernelbench-31");
    const size_t bytes = size_t(p->conv.input_elems()) * 4 + GpuReference::y64_bytes(*p) +
                         GpuReference::ref64_bytes(*p) + size_t(p->out_elems()) * 4;
    if (!enough_memory(bytes)) GTEST_SKIP() << "needs " << bytes / (1 << 20) << " MiB of free device memory";
    GpuReference ref(*p, arch_);
    for (const RefProgramInfo& prog : ref.programs()) {
      std::printf("  NVRTC %-16s %7.1f ms, %d registers, %d spill stores\n", prog.name.c_str(), prog.compile_ms,
                  prog.registers, prog.spill_stores);
    }
    const DeviceInputs in = draw_inputs(ref, *p, 11, stream());
    gpu::DeviceBuffer y64(GpuReference::y64_bytes(*p));
    gpu::DeviceBuffer separate;
    if (reduce) separate = gpu::DeviceBuffer(GpuReference::ref64_bytes(*p));
    const gpu::DeviceBuffer& ref64 = reduce ? separate : y64;  // in place without a reduction

    ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), y64.ptr(), ref64.ptr(), stream());  // warm-up
    gpu::Event start, stop;
    start.record(stream());
    ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), y64.ptr(), ref64.ptr(), stream());
    stop.record(stream());
    const float ms = gpu::Event::elapsed_ms(start, stop);
    std::printf("  reference %s: %.1f ms (%.2f TFLOP/s fp64)\n", reduce ? "kernelbench-32" : "kernelbench-31", ms,
                p->conv.flops() / (double(ms) * 1e9));
    EXPECT_LT(ms, 1500.0f);

    expect_image_matches_cpu(*p, in, ref64, 0, stream());
    expect_image_matches_cpu(*p, in, ref64, p->conv.n - 1, stream());

    gpu::DeviceBuffer out(size_t(p->out_elems()) * 4);
    ref.fill_u32(out.ptr(), size_t(p->out_elems()), kNaNSentinel, stream());
    start.record(stream());
    const GpuErrorStats s = ref.compare(out.ptr(), false, ref64.ptr(), 1e-4, 1e-4, stream());
    stop.record(stream());
    std::printf("  compare: %.2f ms\n", double(gpu::Event::elapsed_ms(start, stop)));
    EXPECT_EQ(s.nonfinite, uint64_t(p->out_elems()));
  }
}

// Offsets past 2^31 elements: a 1x1 conv whose input and output have 2.18e9 elements.
TEST_F(GpuReferenceTest, IndexesPast2To31Elements) {
  spec::Problem p;
  p.conv = conv(520, 1, 2048, 2048, 1, 1, 1);
  p.pre = {op(OpKind::mul, {scalar(3.0)})};
  ASSERT_GT(p.out_elems(), int64_t(1) << 31);
  const size_t bytes = size_t(p.conv.input_elems()) * 4 + GpuReference::y64_bytes(p) + size_t(p.out_elems()) * 4;
  if (!enough_memory(bytes)) GTEST_SKIP() << "needs " << bytes / (1 << 20) << " MiB of free device memory";
  GpuReference ref(p, arch_);
  const DeviceInputs in = draw_inputs(ref, p, 21, stream());
  gpu::DeviceBuffer y64(GpuReference::y64_bytes(p));
  ref.compute(in.x.ptr(), in.w.ptr(), in.chan.ptr(), y64.ptr(), y64.ptr(), stream());
  expect_image_matches_cpu(p, in, y64, p.conv.n - 1, stream());

  gpu::DeviceBuffer out(size_t(p.out_elems()) * 4);
  ref.fill_u32(out.ptr(), size_t(p.out_elems()), kNaNSentinel, stream());
  EXPECT_EQ(ref.check_u32(out.ptr(), size_t(p.out_elems()), kNaNSentinel, stream()), 0u);
  const GpuErrorStats s = ref.compare(out.ptr(), false, y64.ptr(), 1e-4, 1e-4, stream());
  EXPECT_EQ(s.nonfinite, uint64_t(p.out_elems()));  // a count past 2^31
  EXPECT_EQ(s.first_bad, 0u);
}

}  // namespace
}  // namespace fusetune::reference
