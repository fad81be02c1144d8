#pragma once
// fused-gemm's view of a problem's epilogue: what its kernel applies to each accumulator, in any
// spelling of the problem (chain form or general form). Elementwise items (ops, and `as NAME`,
// which the kernel keeps in a variable) on each output element, at most one reduction over the
// features (dim 1: min, max, sum, mean or logsumexp, keepdim or not), then items on the reduced
// value. Operands: scalars, per-feature parameters (N floats) before the reduction, and values
// named in the same part of the chain.
#include <optional>
#include <string>
#include <vector>

#include "codegen/op_render.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

struct GemmChainItem {
  int named = -1;  // >= 0: `as NAME` defining named value `named` here (op unused)
  spec::Op op;
};

enum class GemmReduce { none, min, max, sum, mean, logsumexp };

struct GemmEpilogue {
  std::vector<GemmChainItem> pre;   // on each output element
  GemmReduce reduce = GemmReduce::none;
  std::vector<GemmChainItem> post;  // on the reduced value (empty without a reduction)
};

// nullopt where the fused GEMM cannot apply the epilogue: another stage kind (norms, pooling,
// softmax...), an extra input, a parameter that is not N floats, a named value used outside its
// part of the chain, a second reduction, or one over other dims.
[[nodiscard]] std::optional<GemmEpilogue> gemm_epilogue(const spec::Problem& problem);

// The device functions fused_gemm.cu calls: ft_chain (no reduction), or ft_chain_pre, ft_chain_post
// and -- min/max/sum/mean -- ft_reduce_init/step/finish over the N features (logsumexp's are the
// template's own, ft_lse.cuh).
[[nodiscard]] std::string render_gemm_epilogue(const GemmEpilogue& e, const ChanLayout& chan);

}  // namespace fusetune::codegen
