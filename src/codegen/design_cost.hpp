#pragma once
// What a design's kernels cost beyond the bytes they move, as a hook of the design (the cost
// model, tune/cost_model.cpp, calls it; nothing matches design names outside this table). Today
// only the fused convolutions have one: their kernel computes the conv's FLOP itself, so it
// costs at least its padded GEMM at the tensor-core rate. A new design that computes a conv (or
// a GEMM) adds its row in design_cost.cpp.
#include <span>
#include <string_view>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

// The FLOP v's kernels compute for `conv` (padding included, every product of a split counted).
using ConvFlopHook = double (*)(const spec::Conv& conv, const Variant& v);

struct DesignCost {
  std::string_view design;  // Variant::design, exactly (KernelDesign::prefix)
  ConvFlopHook conv_flop;
};

// Every design with a hook.
[[nodiscard]] std::span<const DesignCost> design_cost_table();
// The hook of v's design; nullptr when its kernels compute no conv.
[[nodiscard]] ConvFlopHook conv_flop_hook(const Variant& v);

}  // namespace fusetune::codegen
