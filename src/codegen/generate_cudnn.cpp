// The `cudnn` candidate: the conv alone, without bias, in each layout: the floor of any
// "conv, then epilogue" design. Its output y is not the problem's output, so it is timed but
// not verified against the reference. The NHWC variant's layout transforms are set-up steps
// outside the timed region (the floor is the conv on NHWC data).
#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

std::vector<Variant> generate_cudnn(const spec::Problem& problem, const Shape& s, const GenerateOptions& options) {
  std::vector<Variant> out;
  const bool x_is_nhwc = problem.conv.in == spec::Layout::nhwc;

  if (!x_is_nhwc) {
    Variant v;
    v.candidate = "cudnn";
    v.name = "cudnn.nchw";
    v.params = {{"layout", kLayoutNchw}};
    v.plan.push_back(conv_step(spec::Layout::nchw, false, "x"));
    v.output_buffer = "y";
    v.output_layout = spec::Layout::nchw;
    out.push_back(std::move(v));
  }

  if (options.channels_last || x_is_nhwc) {
    Variant v;
    v.candidate = "cudnn";
    v.name = "cudnn.nhwc";
    v.params = {{"layout", kLayoutNhwc}};
    const TransposeConfig wt = w_to_krsc(s);
    const TransposeConfig xt = x_to_nhwc(s);
    SourceBuilder b(options.problem_text, v.name, v.candidate);
    b.param("layout", kLayoutNhwc);
    b.kernel(wt.kernel_name);
    if (!x_is_nhwc) {
      b.kernel(xt.kernel_name);
      for (const auto& [name, value] : xt.params()) {
        v.params.emplace_back(name, value);
        b.param(name, value);
      }
    }
    b.defines("problem shape", shape_defines(s));
    b.template_file("ft_common.cuh");
    b.template_file("ft_transpose.cuh");
    b.template_file("transform_nchw_to_nhwc.cu");
    b.code("layout transforms", wt.instantiation() + (x_is_nhwc ? "" : xt.instantiation()));
    v.source = b.str();
    v.plan.push_back(transpose_step(wt, "w", "w_krsc", false));
    if (!x_is_nhwc) v.plan.push_back(transpose_step(xt, "x", "x_nhwc", false));
    v.plan.push_back(conv_step(spec::Layout::nhwc, false, x_is_nhwc ? "x" : "x_nhwc"));
    v.output_buffer = "y";
    v.output_layout = spec::Layout::nhwc;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace fusetune::codegen
