// The `epilogue` candidate: cuDNN's conv without bias, then one generated kernel for bias +
// the whole epilogue. Two designs: after an NCHW conv, and channels-last (NHWC conv, the
// input transposed first unless it is NHWC already).
#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

namespace {

struct Context {
  const spec::Problem& problem;
  const Shape& s;
  const GenerateOptions& options;
};

// Bytes the epilogue kernel itself must move: y read once, the output written once.
double epilogue_bytes(const spec::Problem& problem, const Shape& s) {
  return fp32_bytes(s.conv_out_elems()) + fp32_bytes(problem.reduce ? s.pixels() : s.conv_out_elems());
}

// The layout of a reduced output (N, 1, P, Q): the same memory either way, named as asked.
spec::Layout reduced_layout(const spec::Problem& p) {
  return p.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
}

// y NCHW from cuDNN, then the design's kernel.
Variant nchw_variant(const Context& cx, const KernelDesign& d, const ParamValues& point) {
  const bool reduce = cx.problem.reduce.has_value();
  Variant v;
  v.candidate = Candidate::epilogue;
  v.design = d.prefix;
  v.name = d.space.variant_name(d.prefix, point);
  SourceBuilder b(cx.options.problem_text, v.name, std::string(candidate_name(v.candidate)));
  add_params(v, b, point.items);
  b.kernel(d.kernel_name);
  b.defines("problem shape", shape_defines(cx.s));
  b.template_file("ft_common.cuh");
  b.code("epilogue ops", epilogue_chain_code(cx.problem, cx.s));
  if (reduce) b.template_file("ft_reduce_fold.cuh");  // what one value goes through
  b.template_file(d.template_file);
  v.source = b.str();

  PlanBuilder pb(cx.problem, v);
  const BufferRef y = pb.y(spec::Layout::nchw);
  pb.conv(spec::Layout::nchw, pb.x(), pb.w(), y, false);
  // Pointwise runs in place: the output has y's shape and layout.
  const spec::Layout layout = reduce ? reduced_layout(cx.problem) : spec::Layout::nchw;
  const BufferRef out = reduce ? pb.out(layout) : y;
  pb.kernel(d.kernel_name, d.space.launch(point), {y, out, pb.chan()}, {1});
  pb.set_output(out, layout);
  v.kernel_bytes = epilogue_bytes(cx.problem, cx.s);
  return v;
}

// [w -> w_krsc, untimed] [x -> x_nhwc] y NHWC from cuDNN, then the design's kernel.
Variant nhwc_variant(const Context& cx, const KernelDesign& d, const ParamValues& point) {
  const bool reduce = cx.problem.reduce.has_value();
  const bool x_is_nhwc = cx.problem.conv.in == spec::Layout::nhwc;
  const bool in_place = d.template_file == "epilogue_pointwise.cu";  // NHWC output, y's shape
  const TransposeConfig xt = x_to_nhwc(cx.s);
  const TransposeConfig wt = w_to_krsc(cx.s);

  Variant v;
  v.candidate = Candidate::epilogue;
  v.design = d.prefix;
  v.name = d.space.variant_name(d.prefix, point);
  SourceBuilder b(cx.options.problem_text, v.name, std::string(candidate_name(v.candidate)));
  add_params(v, b, point.items);
  if (!x_is_nhwc) add_params(v, b, xt.params());
  b.kernel(wt.kernel_name);
  if (!x_is_nhwc) b.kernel(xt.kernel_name);
  b.kernel(d.kernel_name);
  b.defines("problem shape", shape_defines(cx.s));
  b.template_file("ft_common.cuh");
  b.template_file("ft_transpose.cuh");
  b.code("epilogue ops", epilogue_chain_code(cx.problem, cx.s));
  b.template_file("transform_nchw_to_nhwc.cu");
  b.code("layout transforms", wt.instantiation() + (x_is_nhwc ? "" : xt.instantiation()));
  if (reduce) b.template_file("ft_reduce_fold.cuh");  // what one value goes through
  b.template_file(d.template_file);
  v.source = b.str();

  PlanBuilder pb(cx.problem, v);
  const BufferRef wk = pb.w_krsc();
  pb.transpose(wt, pb.w(), wk, false);
  BufferRef in = pb.x();
  if (!x_is_nhwc) {
    const BufferRef xn = pb.x_nhwc();
    pb.transpose(xt, in, xn, true);
    in = xn;
  }
  const BufferRef y = pb.y(spec::Layout::nhwc);
  pb.conv(spec::Layout::nhwc, in, wk, y, false);
  const spec::Layout layout = reduce ? reduced_layout(cx.problem) : in_place ? spec::Layout::nhwc : spec::Layout::nchw;
  const BufferRef out = in_place ? y : pb.out(layout);
  pb.kernel(d.kernel_name, d.space.launch(point), {y, out, pb.chan()}, {1});
  pb.set_output(out, layout);
  v.kernel_bytes = epilogue_bytes(cx.problem, cx.s) + (x_is_nhwc ? 0.0 : xt.bytes());
  return v;
}

}  // namespace

std::vector<Variant> generate_epilogue(const spec::Problem& problem, const Shape& s, const gpu::DeviceLimits& limits,
                                       const GenerateOptions& options) {
  const Context cx{problem, s, options};
  const bool reduce = problem.reduce.has_value();
  const spec::Layout in = problem.conv.in;
  const spec::Layout want = problem.conv.out;
  std::vector<Variant> out;

  // After an NCHW conv: needs an NCHW input, and an output that may be NCHW (a reduced
  // output (N, 1, P, Q) is the same in both layouts).
  if (in != spec::Layout::nhwc && (reduce || want != spec::Layout::nhwc)) {
    const KernelDesign d = reduce ? reduce_nchw_design(s, limits) : pointwise_nchw_design(s, limits);
    for (const auto& point : d.space.enumerate()) out.push_back(nchw_variant(cx, d, point));
  }

  if (options.channels_last || in == spec::Layout::nhwc) {
    const KernelDesign d = reduce                       ? reduce_nhwc_design(s, limits)
                           : want == spec::Layout::nchw ? pointwise_nhwc_to_nchw_design(s, limits)
                                                        : pointwise_nhwc_design(s, limits);
    for (const auto& point : d.space.enumerate()) out.push_back(nhwc_variant(cx, d, point));
  }
  return out;
}

}  // namespace fusetune::codegen
