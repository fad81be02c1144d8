// codegen::simplify_chain: the rewrites it makes, the ones it must not make, and that a rendered
// simplified chain stays inside the bound the float64 reference derives from the chain as written
// (the TF32 rule's per-op allowances, reference::apply_op_bounded from an exact input), on
// random chains and inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/chain_simplify.hpp"
#include "codegen/op_render.hpp"
#include "kernel_templates/ref_bounds.cuh"
#include "reference/bounds.hpp"
#include "reference/op_fp32.hpp"
#include "reference/op_math.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen {
namespace {

using spec::Op;
using spec::OpKind;

Op op(OpKind k, std::vector<double> scalars = {}) {
  Op o{k, {}};
  for (double s : scalars) o.args.push_back(spec::Operand{false, s, -1});
  return o;
}
Op per_channel(OpKind k) { return Op{k, {spec::Operand{true, 0.0, 0}}}; }

std::string text(const std::vector<Op>& ops) {
  std::string s;
  for (const Op& o : ops) s += (s.empty() ? "" : " | ") + op_text(o);
  return s;
}

TEST(ChainSimplify, FoldsWhatIsExactOrNoLessAccurate) {
  EXPECT_EQ(text(simplify_chain({op(OpKind::mul, {2.0}), op(OpKind::mul, {0.5})})), "mul(1)");
  EXPECT_EQ(text(simplify_chain({op(OpKind::add, {0.5}), op(OpKind::sub, {0.25})})), "add(0.25)");
  EXPECT_EQ(text(simplify_chain({op(OpKind::add, {0.5}), op(OpKind::sub, {0.5})})), "");
  EXPECT_EQ(text(simplify_chain({op(OpKind::neg), op(OpKind::neg), op(OpKind::relu)})), "relu");
  EXPECT_EQ(text(simplify_chain({op(OpKind::sigmoid), op(OpKind::relu)})), "sigmoid");
  EXPECT_EQ(text(simplify_chain({op(OpKind::relu), op(OpKind::relu), op(OpKind::abs)})), "relu");
  EXPECT_EQ(text(simplify_chain({op(OpKind::min, {2.0}), op(OpKind::min, {1.0})})), "min(1)");
  EXPECT_EQ(text(simplify_chain({op(OpKind::max, {0.0}), op(OpKind::relu)})), "max(0)");
  EXPECT_EQ(text(simplify_chain({op(OpKind::clamp, {0.0, 6.0}), op(OpKind::relu)})), "clamp(0, 6)");
  // A fold can enable the next one: add, neg, neg, add.
  EXPECT_EQ(text(simplify_chain({op(OpKind::add, {1.0}), op(OpKind::neg), op(OpKind::neg), op(OpKind::add, {2.0})})),
            "add(3)");
}

TEST(ChainSimplify, LeavesWhatWouldChangeResults) {
  // 0.1 + 0.2 is not an fp32 number: two roundings stay two.
  EXPECT_EQ(simplify_chain({op(OpKind::add, {0.1}), op(OpKind::add, {0.2})}).size(), 2u);
  // Per-channel operands differ per channel.
  EXPECT_EQ(simplify_chain({per_channel(OpKind::mul), op(OpKind::mul, {2.0})}).size(), 2u);
  // relu after an op that can be negative, or softplus with a negative threshold.
  EXPECT_EQ(simplify_chain({op(OpKind::hardswish), op(OpKind::relu)}).size(), 2u);
  EXPECT_EQ(simplify_chain({op(OpKind::softplus, {1.0, -5.0}), op(OpKind::relu)}).size(), 2u);
  EXPECT_EQ(simplify_chain({op(OpKind::clamp, {-1.0, 1.0}), op(OpKind::relu)}).size(), 2u);
  // A product that leaves fp32's normal range.
  EXPECT_EQ(simplify_chain({op(OpKind::mul, {1e30}), op(OpKind::mul, {1e30})}).size(), 2u);
  EXPECT_EQ(simplify_chain({op(OpKind::mul, {0.0}), op(OpKind::mul, {2.0})}).size(), 2u);
}

// The rendered simplified chain, computed as the kernel does (reference::apply_op_fp32), is
// inside the bound of the chain as written, for random chains of the ops the rules touch.
TEST(ChainSimplify, SimplifiedChainsStayInsideTheOriginalBound) {
  std::mt19937 rng(2026);
  const std::vector<Op> pool = {op(OpKind::mul, {2.0}),  op(OpKind::mul, {0.75}), op(OpKind::mul, {-1.5}),
                                op(OpKind::add, {0.5}),  op(OpKind::sub, {0.25}), op(OpKind::add, {3.0}),
                                op(OpKind::neg),         op(OpKind::relu),        op(OpKind::abs),
                                op(OpKind::sigmoid),     op(OpKind::min, {1.0}),  op(OpKind::max, {-1.0}),
                                op(OpKind::tanh),        op(OpKind::max, {0.5}),  op(OpKind::clamp, {0.0, 2.0})};
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
  std::uniform_real_distribution<float> value(-8.0f, 8.0f);
  int simplified = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<Op> chain;
    const size_t len = 2 + trial % 5;
    for (size_t i = 0; i < len; ++i) chain.push_back(pool[pick(rng)]);
    const std::vector<Op> rendered = simplify_chain(chain);
    simplified += rendered.size() < chain.size();
    for (int i = 0; i < 16; ++i) {
      const float x = value(rng);
      reference::Bounded b{double(x), 0.0, 0.0};
      for (const Op& o : chain) reference::apply_op_bounded(o, b, nullptr);
      float got = x;
      for (const Op& o : rendered) got = reference::apply_op_fp32(o, got, nullptr);
      if (std::isnan(b.v)) {
        EXPECT_TRUE(std::isnan(got)) << text(chain);
        continue;
      }
      if (!(b.e < INFINITY)) continue;
      EXPECT_LE(std::fabs(double(got) - b.v), b.e + 1e-300) << text(chain) << " -> " << text(rendered) << " at " << x;
    }
  }
  EXPECT_GT(simplified, 500);  // the rules do fire on such chains
}

}  // namespace
}  // namespace fusetune::codegen
