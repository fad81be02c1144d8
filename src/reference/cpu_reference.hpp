#pragma once
// The float64 reference of a whole problem on the CPU, for small shapes (tests, `smoke`,
// cross-checking the GPU reference kernel). Every fp32 product is exact in double, so
// the only rounding is the accumulation's, orders of magnitude below fp32 or TF32 error.
#include <vector>

#include "common/math_mode.hpp"
#include "reference/problem_data.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// Direct convolution with stride, zero padding and dilation. x is (N,C,H,W), w (K,C,R,S),
// bias_or_null K floats or null; returns (N,K,P,Q). Layout words in `conv` are ignored:
// buffers are in logical order.
[[nodiscard]] std::vector<double> conv2d_nchw(const spec::Conv& conv, const float* x,
                                              const float* w, const float* bias_or_null);

// conv (+ bias) -> pre ops -> channel reduction (keepdim) -> post ops, as PyTorch eager
// computes it but in float64. Returns problem.out_elems() values in NCHW logical order:
// (N,K,P,Q), or (N,1,P,Q) with a reduction. Throws InputError for a malformed problem or
// buffers of the wrong size. Meant for shapes up to a few GFLOP: it runs at roughly
// 3 GFLOP/s per core (planes spread over all cores), and holds the output, or with a
// reduction one image's K planes, as doubles.
[[nodiscard]] std::vector<double> reference_output(const spec::Problem& problem,
                                                   const ProblemData& data);

// A reference with the TF32 rule's per-element bound and variance, stored as the GPU
// reference stores them (fp32, rounded up; +inf bound: unchecked).
struct BoundedReference {
  std::vector<double> values;  // NCHW
  std::vector<float> bound;
  std::vector<float> var;
};

// The CPU twin of GpuReference::compute, for small shapes (tests, cross-checking the GPU): the
// same formulas (kernel_templates/ref_bounds.cuh, reference/bounds.hpp), the same
// op facts (spec::op_info), the same storage (E0 and V0 rounded up to fp32 before the epilogue
// reads them, as ref_conv.cu writes them). values are reference_output's up to double
// rounding (the bias is added after the sum, as on the GPU). `math` picks V0: the TF32 rule's or
// the fp32 rule's dot-product term (ref_bounds.cuh ft_var_main).
[[nodiscard]] BoundedReference reference_with_bounds(const spec::Problem& problem, const ProblemData& data,
                                                     MathMode math = MathMode::tf32);

// The conv alone (no bias; the `cudnn` candidate's reference): y, E0, V0 for (N,K,P,Q).
[[nodiscard]] BoundedReference conv_with_bounds(const spec::Conv& conv, const float* x, const float* w,
                                                MathMode math = MathMode::tf32);

}  // namespace fusetune::reference
