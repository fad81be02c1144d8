#include "reference/thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "reference/op_math.hpp"
#include "reference/problem_check.hpp"
#include "spec/ops.hpp"

namespace fusetune::reference {
namespace {

using spec::OpKind;
using Values = std::vector<double>;

// An operand's value, or nothing when it is per-channel and no channel was given (or the op
// has no operand i). Missing optional operands take the same PyTorch defaults as apply_op
// (spec::operand_or_default).
std::optional<double> operand(const spec::Op& op, size_t i, const double* chan_k) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a || (a->per_channel && chan_k == nullptr)) return std::nullopt;
  return operand_value(*a, chan_k);
}

// Points in the op's input space where its output changes branch.
Values breakpoints(const spec::Op& op, const double* chan_k) {
  const auto a0 = operand(op, 0, chan_k);
  switch (op.kind) {
    case OpKind::min:
    case OpKind::max: return a0 ? Values{*a0} : Values{};
    case OpKind::clamp:
    case OpKind::hardtanh: {
      Values v;
      if (auto lo = operand(op, 0, chan_k)) v.push_back(*lo);
      if (auto hi = operand(op, 1, chan_k)) v.push_back(*hi);
      return v;
    }
    case OpKind::relu:
    case OpKind::leaky_relu:
    case OpKind::abs: return {0.0};
    case OpKind::hardswish:
    case OpKind::hardsigmoid: return {-3.0, 3.0};
    case OpKind::softplus: {
      const auto beta = operand(op, 0, chan_k);
      const auto threshold = operand(op, 1, chan_k);
      if (!beta || !threshold || *beta == 0.0) return {};
      return {*threshold / *beta};
    }
    default: return {};
  }
}

// The x > 0 with f(x) = t for an f that is increasing on x >= 0 with f(0) = 0 and f(x) <= x
// (gelu, silu, mish, hardswish): bisection on the reference function itself.
double positive_preimage(const spec::Op& op, double t) {
  double lo = 0.0, hi = 1.0;
  while (apply_op(op, hi, nullptr) < t && std::isfinite(hi)) hi *= 2.0;
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;  // converged to adjacent doubles
    (apply_op(op, mid, nullptr) < t ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Inputs x where op's output crosses t.
Values preimages(const spec::Op& op, double t, const double* chan_k) {
  // First operand, with apply_op's default where it has one (hardtanh's lo, leaky_relu's
  // slope); ops without operands never read it.
  const auto a = operand(op, 0, chan_k);
  if (!a && spec::op_info(op.kind).max_args > 0) return {};  // a per-channel operand and no channel given
  switch (op.kind) {
    case OpKind::add: return {t - *a};
    case OpKind::sub: return {t + *a};
    case OpKind::rsub: return {*a - t};
    case OpKind::mul: return *a != 0.0 ? Values{t / *a} : Values{};
    case OpKind::div: return std::isfinite(*a) ? Values{t * *a} : Values{};
    case OpKind::rdiv: return *a != 0.0 && t != 0.0 ? Values{*a / t} : Values{};
    case OpKind::min: return t < *a ? Values{t} : Values{};
    case OpKind::max: return t > *a ? Values{t} : Values{};
    case OpKind::clamp:
    case OpKind::hardtanh: {
      const auto hi = operand(op, 1, chan_k);
      return hi && *a < t && t < *hi ? Values{t} : Values{};
    }
    case OpKind::relu: return t > 0.0 ? Values{t} : Values{};
    case OpKind::leaky_relu:
      if (t >= 0.0) return {t};
      return *a > 0.0 ? Values{t / *a} : Values{};
    case OpKind::neg: return {-t};
    case OpKind::abs: return t > 0.0 ? Values{-t, t} : t == 0.0 ? Values{0.0} : Values{};
    case OpKind::square:
      return t > 0.0 ? Values{-std::sqrt(t), std::sqrt(t)} : t == 0.0 ? Values{0.0} : Values{};
    case OpKind::exp: return t > 0.0 ? Values{std::log(t)} : Values{};
    case OpKind::log: return {std::exp(t)};
    case OpKind::sqrt: return t >= 0.0 ? Values{t * t} : Values{};
    case OpKind::tanh: return std::fabs(t) < 1.0 ? Values{std::atanh(t)} : Values{};
    case OpKind::sigmoid: return t > 0.0 && t < 1.0 ? Values{std::log(t / (1.0 - t))} : Values{};
    case OpKind::hardsigmoid: return t > 0.0 && t < 1.0 ? Values{6.0 * t - 3.0} : Values{};
    case OpKind::gelu:
    case OpKind::gelu_tanh:
    case OpKind::silu:
    case OpKind::mish:
    case OpKind::hardswish:
      // Below 0 these have two preimages near a minimum; best effort skips them.
      if (t == 0.0) return {0.0};
      return t > 0.0 ? Values{positive_preimage(op, t)} : Values{};
    case OpKind::softplus: {
      const auto beta = operand(op, 0, chan_k);
      const auto threshold = operand(op, 1, chan_k);
      if (!beta || !threshold || *beta <= 0.0 || t <= 0.0) return {};
      if (*beta * t > *threshold) return {t};  // the linear branch: output is x itself
      return {std::log(std::expm1(*beta * t)) / *beta};
    }
  }
  return {};
}

}  // namespace

Values reduction_start_points(const spec::Problem& p, const double* chan_k) {
  check_problem(p);
  if (!p.reduce || (*p.reduce != spec::ReduceKind::min && *p.reduce != spec::ReduceKind::max)) return {};
  Values level = {0.0};
  for (size_t j = p.pre.size(); j-- > 0 && !level.empty();) {
    Values prev;
    for (double t : level)
      for (double x : preimages(p.pre[j], t, chan_k)) prev.push_back(x);
    level = std::move(prev);
  }
  std::erase_if(level, [](double v) { return !std::isfinite(v); });
  std::sort(level.begin(), level.end());
  level.erase(std::unique(level.begin(), level.end()), level.end());
  return level;
}

Values epilogue_thresholds(const spec::Problem& p, const double* chan_k) {
  check_problem(p);  // param indices must be in range before chan_k is read
  // The chain as the conv output sees it; post ops join when the reduction passes a value
  // through unchanged (see the header).
  std::vector<const spec::Op*> chain;
  for (const spec::Op& op : p.pre) chain.push_back(&op);
  if (!p.reduce || *p.reduce != spec::ReduceKind::sum) {
    for (const spec::Op& op : p.post) chain.push_back(&op);
  }
  Values out;
  for (size_t i = 0; i < chain.size(); ++i) {
    const double* ck = i < p.pre.size() ? chan_k : nullptr;
    Values level = breakpoints(*chain[i], ck);
    for (size_t j = i; j-- > 0 && !level.empty();) {
      Values prev;
      for (double t : level) {
        for (double x : preimages(*chain[j], t, j < p.pre.size() ? chan_k : nullptr)) prev.push_back(x);
      }
      level = std::move(prev);
    }
    out.insert(out.end(), level.begin(), level.end());
  }
  std::erase_if(out, [](double v) { return !std::isfinite(v); });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fusetune::reference
