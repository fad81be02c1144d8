#pragma once
// A correct (or deliberately broken) TF32 pipeline on the CPU, to test the TF32 rule against:
// x and w rounded to TF32 (round to nearest even, or truncated), products exact, summed in
// fp32 in a shuffled order (a GEMM's order is not the reference's), the conv bias added in
// fp32, then the epilogue in fp32 with the formulas of kernel_templates/ft_common.cuh (host
// libm's expf, erff, ... stand in for CUDA's: both are within their documented few ulps), the
// reduction in fp32. With tf32 = false the conv is strict fp32 (fmaf, unrounded inputs).
// Planted bugs reproduce real kernel mistakes, to check that the rule rejects them.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "kernel_templates/ft_math.cuh"
#include "reference/op_fp32.hpp"
#include "reference/problem_data.hpp"
#include "spec/ops.hpp"
#include "spec/problem.hpp"

namespace fusetune::testing {

enum class Bug {
  none,
  skip_tap,           // the filter tap (c = C-1, r = 0, s = 0) is never accumulated
  bias_shift,         // channel k gets the conv bias of channel k+1
  unwritten_row,      // row P/2 of image N-1, channel 0, keeps its NaN sentinel
  reduce_skips_last,  // the channel reduction stops at K-1
  op_twice,           // the pre-reduction chain runs twice on channel 1
};

struct Emulation {
  bool tf32 = true;       // false: strict fp32 conv
  bool split = false;     // 3xTF32: each term as small*big + big*small + big*big (tf32 ignored)
  bool truncate = false;  // tf32 inputs truncated toward zero instead of rounded to nearest
  // The accumulation as a tensor core does it (tc_step) instead of fp32 fma: -1 off, else the
  // guard bits its alignment keeps below the largest addend's 24.
  int tc_guard_bits = -1;
  Bug bug = Bug::none;
  uint64_t order_seed = 7;  // the summation order of the conv's terms
};

// x rounded to TF32 (10 stored mantissa bits): round to nearest even, or truncated.
inline float tf32_round(float x, bool truncate) {
  if (!std::isfinite(x)) return x;
  auto b = std::bit_cast<uint32_t>(x);
  if (!truncate) b += 0xfffu + ((b >> 13) & 1u);
  b &= ~0x1fffu;
  return std::bit_cast<float>(b);
}

// bf16 (7 stored mantissa bits), round to nearest even.
inline float bf16_round(float x) {
  if (!std::isfinite(x)) return x;
  auto b = std::bit_cast<uint32_t>(x);
  b += 0x7fffu + ((b >> 16) & 1u);
  b &= ~0xffffu;
  return std::bit_cast<float>(b);
}

inline float nan_f() { return std::numeric_limits<float>::quiet_NaN(); }

// The epilogue's ops as the generated kernels compute them (kernel_templates/ft_math.cuh on the host).
inline float op_fp32(const spec::Op& op, float v, const float* chan_k) { return reference::apply_op_fp32(op, v, chan_k); }

// One k-step of a tensor core's fp32 accumulation, as Fasi et al. (2021) measured it on V100 and
// A100 and the GPU figures of issue 41 suggest for Hopper: the products (exact) and the
// accumulator aligned to the largest exponent among them, each truncated toward zero to
// 24 + guard_bits bits below it, added exactly, the sum truncated (not rounded) to fp32.
inline float tc_step(float acc, const std::vector<double>& products, int guard_bits) {
  int emax = std::numeric_limits<int>::min();
  auto widen = [&](double v) {
    if (v != 0.0) emax = std::max(emax, std::ilogb(v));
  };
  widen(acc);
  for (double v : products) widen(v);
  if (emax == std::numeric_limits<int>::min()) return acc;
  const double quantum = std::ldexp(1.0, emax - 23 - guard_bits);
  double sum = std::trunc(double(acc) / quantum) * quantum;  // exact in double: < 35 significant bits
  for (double v : products) sum += std::trunc(v / quantum) * quantum;
  float f = float(sum);
  if (std::fabs(double(f)) > std::fabs(sum)) f = std::nextafter(f, 0.0f);
  return f;
}

// The problem's fp32 output (NCHW) computed the way `how` says, from inputs `d`.
inline std::vector<float> emulate(const spec::Problem& p, const reference::ProblemData& d, const Emulation& how) {
  const spec::Conv& c = p.conv;
  const int64_t P = c.p(), Q = c.q(), PQ = P * Q, K = c.k, crs = c.c * c.r * c.s;
  const auto np = size_t(p.num_params);
  // Per-channel parameters at channel k, as the kernels read chan.
  auto chan_k = [&](int64_t k) {
    std::vector<float> v(np);
    for (size_t i = 0; i < np; ++i) v[i] = d.chan[size_t(reference::chan_index(p, int(i)) + k)];
    return v;
  };
  auto in = [&](float v) { return how.tf32 ? tf32_round(v, how.truncate) : v; };

  std::mt19937_64 rng(how.order_seed);
  std::vector<int64_t> order(static_cast<size_t>(crs));
  std::vector<float> conv(size_t(c.conv_out_elems()));  // after bias and pre ops
  for (int64_t n = 0; n < c.n; ++n) {
    for (int64_t k = 0; k < K; ++k) {
      const std::vector<float> ck = chan_k(k);
      for (int64_t pq = 0; pq < PQ; ++pq) {
        const int64_t oh = pq / Q, ow = pq % Q;
        std::iota(order.begin(), order.end(), int64_t(0));
        std::shuffle(order.begin(), order.end(), rng);
        float acc = 0.0f;
        std::vector<double> step;  // tc_guard_bits >= 0: the k-step's products so far
        for (const int64_t t : order) {
          const int64_t ci = t / (c.r * c.s), r = (t / c.s) % c.r, s = t % c.s;
          if (how.bug == Bug::skip_tap && ci == c.c - 1 && r == 0 && s == 0) continue;
          const int64_t ih = oh * c.stride_h - c.pad_h + r * c.dil_h;
          const int64_t iw = ow * c.stride_w - c.pad_w + s * c.dil_w;
          if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
          const float x32 = d.x[size_t(((n * c.c + ci) * c.h + ih) * c.w + iw)];
          const float w32 = d.w[size_t(k * crs + t)];
          if (how.split) {  // the order kernel_templates/fused_conv_halo.cu accumulates them
            const float xb = tf32_round(x32, false), wb = tf32_round(w32, false);
            const float xs = tf32_round(x32 - xb, false), ws = tf32_round(w32 - wb, false);
            acc = std::fma(xb, wb, std::fma(xb, ws, std::fma(xs, wb, acc)));
            continue;
          }
          if (how.tc_guard_bits >= 0) {
            step.push_back(double(in(x32)) * double(in(w32)));
            if (step.size() == 8) {
              acc = tc_step(acc, step, how.tc_guard_bits);
              step.clear();
            }
            continue;
          }
          acc = std::fma(in(x32), in(w32), acc);  // a TF32 product is exact in fp32: fma == add of the product
        }
        if (!step.empty()) acc = tc_step(acc, step, how.tc_guard_bits);
        float v = acc;
        if (c.bias) v = v + d.chan[size_t(how.bug == Bug::bias_shift ? (k + 1) % K : k)];
        const int runs = how.bug == Bug::op_twice && k == 1 ? 2 : 1;
        for (int run = 0; run < runs; ++run) {
          for (const spec::Op& op : p.pre) v = op_fp32(op, v, ck.data());
        }
        conv[size_t((n * K + k) * PQ + pq)] = v;
      }
    }
  }

  std::vector<float> out(size_t(p.out_elems()));
  if (!p.reduce) {
    for (size_t i = 0; i < out.size(); ++i) {
      float v = conv[i];
      for (const spec::Op& op : p.post) v = op_fp32(op, v, nullptr);
      out[i] = v;
    }
  } else {
    const int64_t last = how.bug == Bug::reduce_skips_last ? K - 1 : K;
    for (int64_t n = 0; n < c.n; ++n) {
      for (int64_t pq = 0; pq < PQ; ++pq) {
        float acc = 0.0f;
        switch (*p.reduce) {
          case spec::ReduceKind::min: acc = std::numeric_limits<float>::infinity(); break;
          case spec::ReduceKind::max: acc = -std::numeric_limits<float>::infinity(); break;
          case spec::ReduceKind::sum:
          case spec::ReduceKind::mean: acc = 0.0f; break;
        }
        for (int64_t k = 0; k < last; ++k) {
          const float v = conv[size_t((n * K + k) * PQ + pq)];
          switch (*p.reduce) {
            case spec::ReduceKind::min: acc = ft_min(acc, v); break;
            case spec::ReduceKind::max: acc = ft_max(acc, v); break;
            case spec::ReduceKind::sum:
            case spec::ReduceKind::mean: acc = acc + v; break;
          }
        }
        if (*p.reduce == spec::ReduceKind::mean) acc = acc / float(K);
        for (const spec::Op& op : p.post) acc = op_fp32(op, acc, nullptr);
        out[size_t(n * PQ + pq)] = acc;
      }
    }
  }
  if (how.bug == Bug::unwritten_row) {
    const int64_t n = c.n - 1, row = P / 2;
    for (int64_t q = 0; q < Q; ++q) out[size_t(n * p.out_channels() * PQ + row * Q + q)] = nan_f();
  }
  return out;
}

// The cases gpu_reference_test's Tf32CompareJudgesEmulatedOutputs uploads to the device, also
// judged on the CPU by reference_tf32_rule_test (so the GPU test's expectations hold there
// first): correct pipelines, each planted bug, a bf16 output.
struct RuleCase {
  spec::Problem problem;
  Bug bug = Bug::none;
  bool bf16 = false;  // the correct output rounded to bf16
  const char* name = "";
  [[nodiscard]] bool correct() const { return bug == Bug::none && !bf16; }
};

inline std::vector<RuleCase> rule_cases() {
  auto op = [](spec::OpKind kind, std::vector<spec::Operand> args = {}) { return spec::Op{kind, std::move(args)}; };
  const spec::Operand two{false, 2.0, -1}, half{false, 0.5, -1}, param0{true, 0.0, 0};
  spec::Problem p31;
  p31.conv.n = 2, p31.conv.c = 8, p31.conv.h = 12, p31.conv.w = 11, p31.conv.k = 6, p31.conv.r = 3, p31.conv.s = 3;
  p31.num_params = 1;
  p31.pre = {op(spec::OpKind::min, {half}), op(spec::OpKind::add, {param0}), op(spec::OpKind::mul, {two})};
  spec::Problem twice = p31;  // not idempotent: a second pass changes every value
  twice.pre = {op(spec::OpKind::add, {param0}), op(spec::OpKind::mul, {two})};
  spec::Problem p32 = p31;
  p32.pre = {op(spec::OpKind::mul, {two})};
  p32.num_params = 0;
  p32.reduce = spec::ReduceKind::min;
  return {
      {p31, Bug::none, false, "correct, kernelbench-31 chain"},
      {p32, Bug::none, false, "correct, kernelbench-32 chain"},
      {twice, Bug::none, false, "correct, add | mul"},
      {p31, Bug::skip_tap, false, "one filter tap skipped"},
      {p31, Bug::bias_shift, false, "bias of channel k+1"},
      {p31, Bug::unwritten_row, false, "one output row unwritten"},
      {twice, Bug::op_twice, false, "op chain applied twice"},
      {p32, Bug::reduce_skips_last, false, "reduction skips the last channel"},
      {p31, Bug::none, true, "bf16 output"},
  };
}

inline constexpr uint64_t kRuleCaseSeed = 77;

// The case's candidate output (NCHW), from inputs drawn with kRuleCaseSeed.
inline std::vector<float> rule_case_output(const RuleCase& c, const reference::ProblemData& d) {
  Emulation how;
  how.bug = c.bug;
  std::vector<float> out = emulate(c.problem, d, how);
  if (c.bf16) {
    for (float& v : out) v = bf16_round(v);
  }
  return out;
}

}  // namespace fusetune::testing
