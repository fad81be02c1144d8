// The `cudnn` candidate: the conv alone, without bias, in each layout: the floor of any
// "conv, then epilogue" design. Its output is the conv output, verified against the conv's
// own reference. The NHWC variant's layout transforms are set-up steps outside the timed
// region (the floor is the conv on NHWC data).
#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

std::vector<Variant> generate_cudnn(const spec::Problem& problem, const Shape& s, const GenerateOptions& options) {
  std::vector<Variant> out;
  const bool x_is_nhwc = problem.conv.in == spec::Layout::nhwc;

  if (!x_is_nhwc) {
    Variant v;
    v.candidate = Candidate::cudnn;
    v.design = v.name = "cudnn.nchw";
    v.params = {{"layout", kLayoutNchw}};
    PlanBuilder pb(problem, v);
    const BufferRef y = pb.y(spec::Layout::nchw);
    pb.conv(spec::Layout::nchw, pb.x(), pb.w(), y, false);
    pb.set_output(y, spec::Layout::nchw);
    out.push_back(std::move(v));
  }

  if (options.channels_last || x_is_nhwc) {
    Variant v;
    v.candidate = Candidate::cudnn;
    v.design = v.name = "cudnn.nhwc";
    v.params = {{"layout", kLayoutNhwc}};
    const TransposeConfig wt = w_to_krsc(s);
    const TransposeConfig xt = x_to_nhwc(s);
    SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(v.candidate)));
    b.param("layout", kLayoutNhwc);
    b.kernel(wt.kernel_name);
    if (!x_is_nhwc) {
      b.kernel(xt.kernel_name);
      add_params(v, b, xt.params());
    }
    b.defines("problem shape", shape_defines(s));
    b.template_file("ft_common.cuh");
    b.template_file("ft_transpose.cuh");
    b.template_file("transform_nchw_to_nhwc.cu");
    b.code("layout transforms", wt.instantiation() + (x_is_nhwc ? "" : xt.instantiation()));
    v.source = b.str();
    PlanBuilder pb(problem, v);
    const BufferRef wk = pb.w_krsc();
    pb.transpose(wt, pb.w(), wk, false);
    BufferRef in = pb.x();
    if (!x_is_nhwc) {
      const BufferRef xn = pb.x_nhwc();
      pb.transpose(xt, in, xn, false);
      in = xn;
    }
    const BufferRef y = pb.y(spec::Layout::nhwc);
    pb.conv(spec::Layout::nhwc, in, wk, y, false);
    pb.set_output(y, spec::Layout::nhwc);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace fusetune::codegen
