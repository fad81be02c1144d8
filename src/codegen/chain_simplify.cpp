#include "codegen/chain_simplify.hpp"

#include <cmath>
#include <optional>

#include "spec/ops.hpp"

namespace fusetune::codegen {
namespace {

using spec::Op;
using spec::OpKind;

// Operand i as a scalar rounded to fp32 (the value a kernel applies), or none when it is
// per-channel or missing.
std::optional<double> scalar(const Op& op, size_t i) {
  const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
  if (!a || a->per_channel) return std::nullopt;
  const float f = float(a->value);
  if (std::isnan(f)) return std::nullopt;
  return double(f);
}

Op with_scalar(OpKind kind, double value) { return Op{kind, {spec::Operand{false, value, -1}}}; }

// The signed addend of add/sub with a scalar operand.
std::optional<double> addend(const Op& op) {
  if (op.kind != OpKind::add && op.kind != OpKind::sub) return std::nullopt;
  const std::optional<double> a = scalar(op, 0);
  if (!a) return std::nullopt;
  return op.kind == OpKind::add ? *a : -*a;
}

// Every result of `op` is >= 0 or NaN.
bool non_negative(const Op& op) {
  switch (op.kind) {
    case OpKind::relu:
    case OpKind::abs:
    case OpKind::exp:
    case OpKind::sqrt:
    case OpKind::square:
    case OpKind::sigmoid:
    case OpKind::hardsigmoid: return true;
    case OpKind::softplus: {
      const std::optional<double> beta = scalar(op, 0), threshold = scalar(op, 1);
      return beta && threshold && *beta > 0.0 && *threshold >= 0.0;
    }
    case OpKind::clamp:
    case OpKind::hardtanh:
    case OpKind::max: {
      const std::optional<double> lo = scalar(op, 0);
      return lo && *lo >= 0.0;
    }
    default: return false;
  }
}

// The rewrite of the pair (a, b), if one applies: the ops that replace both.
std::optional<std::vector<Op>> combine(const Op& a, const Op& b) {
  if (a.kind == OpKind::neg && b.kind == OpKind::neg) return std::vector<Op>{};
  if ((b.kind == OpKind::relu || b.kind == OpKind::abs) && non_negative(a)) return std::vector<Op>{a};
  if (a.kind == OpKind::mul && b.kind == OpKind::mul) {
    const std::optional<double> x = scalar(a, 0), y = scalar(b, 0);
    if (x && y) {
      const double p = *x * *y;
      if (std::isnormal(float(p))) return std::vector<Op>{with_scalar(OpKind::mul, p)};
    }
  }
  if (const std::optional<double> x = addend(a)) {
    if (const std::optional<double> y = addend(b)) {
      const double s = *x + *y;  // exact in double: both are fp32 numbers
      if (s == 0.0) return std::vector<Op>{};
      if (double(float(s)) == s) return std::vector<Op>{with_scalar(OpKind::add, s)};
    }
  }
  if ((a.kind == OpKind::min || a.kind == OpKind::max) && b.kind == a.kind) {
    const std::optional<double> x = scalar(a, 0), y = scalar(b, 0);
    if (x && y) {
      const double t = a.kind == OpKind::min ? std::fmin(*x, *y) : std::fmax(*x, *y);
      return std::vector<Op>{with_scalar(a.kind, t)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<Op> simplify_chain(const std::vector<Op>& ops) {
  std::vector<Op> out;
  for (const Op& op : ops) {
    out.push_back(op);
    // Each rewrite shortens the chain, so this settles; a result may combine with the op before it.
    while (out.size() >= 2) {
      const std::optional<std::vector<Op>> r = combine(out[out.size() - 2], out.back());
      if (!r) break;
      out.resize(out.size() - 2);
      out.insert(out.end(), r->begin(), r->end());
    }
  }
  return out;
}

}  // namespace fusetune::codegen
