#pragma once
// Every generated candidate's variants for a problem: complete sources and the plans that run
// them. Candidates produced here:
//   unfused   cuDNN conv with its bias, then one out-of-place kernel per op (PyTorch eager)
//   cudnn     the conv alone, NCHW and NHWC (the floor of any "conv, then epilogue" design)
//   epilogue  cuDNN conv without bias, then ONE generated kernel: bias + the whole epilogue
//             (+ the reduction), after an NCHW conv or a channels-last (NHWC) conv
// Plans name the buffers of codegen/variant.hpp; launch shapes are final (no runtime math).
#include <string>
#include <vector>

#include "codegen/variant.hpp"
#include "gpu/device_limits.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

struct GenerateOptions {
  // Also generate the channels-last designs, which transpose an NCHW input to NHWC for
  // cuDNN's NHWC conv. Problems whose input is NHWC always get them (no transform needed).
  bool channels_last = true;
  // The problem's canonical spec, printed in each source's header comment ("" leaves it out).
  std::string problem_text;
  // TEST-ONLY: append planted bad variants ("wrong,fault,hang"; see codegen/planted.hpp).
  std::string plant;
  // --math fp32: fused-conv offers its 3xTF32 design (split products, strict-fp32 accuracy)
  // instead of its TF32 ones, whose products the fp32 rule rejects.
  bool strict_fp32 = false;
};

// A version-2 problem (not a conv2d chain) gets generate_model_variants'.
// Throws InputError for a problem codegen cannot express (a per-channel operand after the
// reduction, a parameter index out of range, post-ops without a reduction) or one tune does not
// take (spec::why_not_tunable).
[[nodiscard]] std::vector<Variant> generate_variants(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                                     const GenerateOptions& options = {});

// The plans of a version-2 problem (any problem that is not conv2d chain form; generate_model.cpp):
// `unfused` (the main operator through cuBLASLt or a cuDNN graph -- GemmStep, ConvNdStep -- then
// one per-stage kernel per stage, as eager runs it), its floor (`cudnn`: the main operator
// alone), `epilogue.stages` (runs of elementwise ops fused) and, for a linear or matmul with a
// chain-form epilogue on sm_90, `fused-gemm` (options.strict_fp32: its 3xTF32 design).
// generate_variants (tune, compile) calls it for these problems. Throws InputError for a conv2d
// chain problem, a channels-last one, or one the stage rules reject.
[[nodiscard]] std::vector<Variant> generate_model_variants(const spec::Problem& problem,
                                                           const gpu::DeviceLimits& limits,
                                                           const GenerateOptions& options = {});

}  // namespace fusetune::codegen
