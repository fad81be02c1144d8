#pragma once
// The float64 reference epilogue for the GPU: the problem's op chain rendered as double
// device functions that follow op_math.cpp formula for formula, in front of the
// kernel_templates/ref_epilogue.cu kernel `ft_ref_epilogue`.
#include <string>

#include "common/math_mode.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The complete NVRTC source of `ft_ref_epilogue` for this problem:
//   a header naming the problem, shape #defines (FT_N, FT_K, FT_P, FT_Q, FT_REF_HAS_BIAS,
//   FT_REF_REDUCE, FT_REF_STRICT, FT_REF_REDUCE_KIND), kernel_templates/ref_math.cu,
//   kernel_templates/ref_bounds.cuh, the rendered ft_ref_pre / ft_ref_reduce_* / ft_ref_post,
//   then kernel_templates/ref_epilogue.cu.
// Scalars become double(float(value)) literals, written exactly; optional operands left out
// take PyTorch's defaults (spec::op_info). Each op carries its bound and variance through
// ft_bound_apply with the op's facts (spec::op_info(kind).bound) as literals, as
// reference/bounds.cpp does on the host: under both rules (the fp32 rule reads the variance,
// its dot-product term; `math` picks only the conv's V0, in ref_conv.cu).
// Compile it with --fmad=false (see ref_math.cu). Throws InputError for a malformed problem
// (check_problem).
[[nodiscard]] std::string render_reference_epilogue_source(const spec::Problem& p, MathMode math);

// One op as a double expression of `v` (the part of the source above, for tests and
// messages): "ft_ref_min(v, 0.5)", "v + (double)chan[128LL + k]".
[[nodiscard]] std::string render_double_op(const spec::Problem& p, const spec::Op& op);

}  // namespace fusetune::reference
