#pragma once
// Pieces generate.cpp assembles: one function per candidate, and the plan steps and source
// sections they share. Internal to codegen.
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/op_render.hpp"
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

// cuDNN conv step: y = conv(in) (+ bias), in the given layout.
[[nodiscard]] Step conv_step(spec::Layout layout, bool with_bias, const std::string& in);
// Kernel step over named buffers.
[[nodiscard]] Step kernel_step(const std::string& kernel, const LaunchConfig& launch, std::vector<std::string> args,
                               const std::string& in, const std::string& out, bool timed = true);
[[nodiscard]] Step transpose_step(const TransposeConfig& t, const std::string& in, const std::string& out,
                                  bool timed);

// The layout transforms of the channels-last designs.
[[nodiscard]] TransposeConfig x_to_nhwc(const Shape& s);  // x (N,C,HW) -> x_nhwc, params tr_*
[[nodiscard]] TransposeConfig w_to_krsc(const Shape& s);  // w (K,C,RS) -> w_krsc, untimed

[[nodiscard]] ChanLayout chan_layout(const Shape& s);

// Device functions for the epilogue templates: ft_chain (no reduction) or ft_chain_pre,
// ft_chain_post and ft_reduce_* (with one).
[[nodiscard]] std::string epilogue_chain_code(const spec::Problem& problem, const Shape& s);

}  // namespace fusetune::codegen
