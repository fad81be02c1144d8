#pragma once
// Builds a variant's buffer table and plan: the standard buffers every design shares (the
// input, filters, per-channel vectors, conv outputs, the problem's output), sized and
// described from the problem in one place, and the steps over them. Generators call it;
// exports and the worker read the table it leaves in the variant.
#include <string>
#include <vector>

#include "codegen/transpose.hpp"
#include "codegen/variant.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen {

class PlanBuilder {
 public:
  // Fills v.buffers and v.plan (both must be empty); `problem` outlives the builder.
  PlanBuilder(const spec::Problem& problem, Variant& v);

  // Read-only inputs, bound to the input draw by the worker.
  BufferRef x();     // the problem's input, in its layout (NCHW or NHWC)
  BufferRef w();     // filters (K, C, R, S), as PyTorch's Conv2d.weight
  BufferRef chan();  // [conv bias][param 0][param 1]..., K floats each

  // Scratch the plan makes.
  BufferRef x_nhwc();  // the input, channels-last, for cuDNN's NHWC convolution
  BufferRef w_krsc();  // the filters KRSC, cuDNN's NHWC filter format
  // A conv-output-shaped tensor (N, channels, P, Q) in `layout`.
  BufferRef conv_shaped(const std::string& name, spec::Layout layout, int64_t channels, const std::string& what);
  BufferRef y(spec::Layout layout);    // "y": the conv output, K channels
  BufferRef out(spec::Layout layout);  // "out": the problem's output (K channels, or 1 after a reduction)
  // Any other scratch: `floats` floats as a vector (planted test variants).
  BufferRef scratch(const std::string& name, TensorLayout layout, std::vector<std::pair<std::string, int64_t>> dims,
                    const std::string& what);

  void conv(spec::Layout layout, BufferRef in, BufferRef filters, BufferRef out, bool with_bias);
  // cuDNN's fused graph (GraphStep): x in `in_layout`, KRSC filters, `out` channels-last; the
  // channels buffer is bound when the conv has a bias or the covered ops take per-channel operands.
  void graph(spec::Layout in_layout, BufferRef in, BufferRef filters, BufferRef out, bool epilogue);
  void kernel(const std::string& name, const LaunchConfig& launch, std::vector<BufferRef> args,
              std::vector<size_t> writes, bool timed = true);
  // A transpose instance (codegen/transpose.hpp): (in) -> (out).
  void transpose(const TransposeConfig& t, BufferRef in, BufferRef out, bool timed);

  void set_output(BufferRef ref, spec::Layout layout);

 private:
  BufferRef add(Buffer b);

  const spec::Problem& p_;
  Variant& v_;
};

}  // namespace fusetune::codegen
