#pragma once
// Rewrites an op chain into a shorter one that a kernel computes at least as accurately, before
// it is rendered (codegen/op_render.cpp). The float64 reference keeps the chain as written: a
// rewrite is only allowed where the rendered result stays inside the bound the reference derives
// from the original chain (tests/chain_simplify_test.cpp checks that on random inputs).
#include <vector>

#include "spec/problem.hpp"

namespace fusetune::codegen {

// The rules, all on scalar operands only (a per-channel operand differs per channel):
//  - mul(a) then mul(b) -> mul(a*b) when the product is a normal fp32 number: one rounding of the
//    constant and one of the product, where the chain had two products (2 u either way);
//  - add/sub(a) then add/sub(b) -> one add when a + b is exact in fp32 (fewer roundings), none
//    when it is 0;
//  - min(a) min(b), max(a) max(b) -> one, with the tighter constant (exact);
//  - neg neg -> nothing; relu or abs after an op whose results are >= 0 or NaN (relu, abs, exp,
//    sqrt, square, sigmoid, hardsigmoid, softplus with beta > 0 and threshold >= 0, clamp or
//    hardtanh or max with a lower limit >= 0) -> dropped (exact).
[[nodiscard]] std::vector<spec::Op> simplify_chain(const std::vector<spec::Op>& ops);

}  // namespace fusetune::codegen
