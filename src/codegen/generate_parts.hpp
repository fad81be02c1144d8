#pragma once
// Pieces generate.cpp assembles: one function per candidate, and the source sections and
// transforms they share. Internal to codegen.
#include <optional>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/op_render.hpp"
#include "codegen/param_space.hpp"
#include "codegen/plan_builder.hpp"
#include "codegen/shape.hpp"
#include "codegen/source_builder.hpp"
#include "codegen/transpose.hpp"

namespace fusetune::codegen {

[[nodiscard]] std::vector<Variant> generate_unfused(const spec::Problem& problem, const Shape& s,
                                                    const GenerateOptions& options);
[[nodiscard]] std::vector<Variant> generate_cudnn(const spec::Problem& problem, const Shape& s,
                                                  const GenerateOptions& options);
[[nodiscard]] std::vector<Variant> generate_epilogue(const spec::Problem& problem, const Shape& s,
                                                     const gpu::DeviceLimits& limits, const GenerateOptions& options);
// None unless the device is sm_90 (fused_conv_applies).
[[nodiscard]] std::vector<Variant> generate_fused_conv(const spec::Problem& problem, const Shape& s,
                                                       const gpu::DeviceLimits& limits, const GenerateOptions& options);

// A linear / unbatched matmul with a chain-form epilogue on sm_90: the wgmma GEMM with the epilogue
// fused (version-2 buffers; generate_model_variants adds them). None where fused_gemm_applies is false.
[[nodiscard]] std::vector<Variant> generate_fused_gemm(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                                       const GenerateOptions& options);

// The main operator of a linear / unbatched matmul whose epilogue fused-gemm cannot apply, as a
// fused-gemm kernel (bias in its epilogue; TF32, or 3xTF32 under strict_fp32) before the stage
// kernels: the points to make (none where the design does not apply), and, for one, the scratch and
// steps added to `v` (W's untimed pack, the GEMM writing `out`) and the source to append to v's.
[[nodiscard]] std::vector<ParamValues> fused_gemm_main_points(const spec::Problem& problem,
                                                              const gpu::DeviceLimits& limits,
                                                              const GenerateOptions& options);
[[nodiscard]] std::string fused_gemm_main(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                          const GenerateOptions& options, const ParamValues& point, Variant& v,
                                          BufferRef x, BufferRef w, std::optional<BufferRef> bias, BufferRef out);

// The conv2d of a version-2 problem (groups 1, not transposed) whose epilogue the fused conv cannot
// apply, as the halo fused-conv kernel (bias in its epilogue; TF32, or 3xTF32 under strict_fp32)
// before the stage kernels: the points to make (none where the design does not apply) and, for
// one, the scratch and steps added to `v` (the filters' untimed pack, the conv writing `out`,
// NCHW) and the source to append to v's.
[[nodiscard]] std::vector<ParamValues> fused_conv_main_points(const spec::Problem& problem,
                                                              const gpu::DeviceLimits& limits,
                                                              const GenerateOptions& options);
// The variant name of a point: `prefix` and the halo space's tags (".p4.n64.s6.e1.c8").
[[nodiscard]] std::string fused_conv_main_name(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                               const GenerateOptions& options, const ParamValues& point,
                                               const std::string& prefix);
[[nodiscard]] std::string fused_conv_main(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                          const GenerateOptions& options, const ParamValues& point, Variant& v,
                                          BufferRef x, BufferRef w, std::optional<BufferRef> bias, BufferRef out);

// A linear / matmul problem's GEMM through cuBLASLt with its fused epilogue taking the problem's
// first op where cuBLASLt has it (relu; gelu_tanh), and through the heuristic's next algorithms
// (ranks 1-3; rank 0 is the unfused candidates'), each before the stage kernels of the rest
// (runs of elementwise ops fused). None for any other problem.
[[nodiscard]] std::vector<Variant> generate_cublaslt_fused(const spec::Problem& problem);

// cuDNN's runtime fusion (templates without an engine configuration: tune/tuner.cpp makes one
// variant per configuration the GPU's cuDNN offers).
[[nodiscard]] std::vector<Variant> generate_cudnn_fused(const spec::Problem& problem, const Shape& s,
                                                        const GenerateOptions& options);

// The layout transforms of the channels-last designs.
[[nodiscard]] TransposeConfig x_to_nhwc(const Shape& s);  // x (N,C,HW) -> x_nhwc, params tr_*
[[nodiscard]] TransposeConfig w_to_krsc(const Shape& s);  // w (K,C,RS) -> w_krsc, untimed
// y (N, P*Q, K) NHWC -> (N, K, P*Q) NCHW, and the reverse.
[[nodiscard]] TransposeConfig nhwc_to_nchw(const Shape& s, const std::string& what);
[[nodiscard]] TransposeConfig nchw_to_nhwc(const Shape& s, const std::string& what);

[[nodiscard]] ChanLayout chan_layout(const Shape& s);

// Device functions for the epilogue templates: ft_chain (no reduction) or ft_chain_pre,
// ft_chain_post and ft_reduce_* (with one).
[[nodiscard]] std::string epilogue_chain_code(const spec::Problem& problem, const Shape& s);

// The variant's parameters, appended in order and each written as a #define.
void add_params(Variant& v, SourceBuilder& b, const std::vector<std::pair<std::string, int64_t>>& params);

}  // namespace fusetune::codegen
