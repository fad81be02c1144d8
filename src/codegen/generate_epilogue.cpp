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

void add_params(Variant& v, SourceBuilder& b, const std::vector<std::pair<std::string, int64_t>>& params) {
  for (const auto& [name, value] : params) {
    v.params.emplace_back(name, value);
    b.param(name, value);
  }
}

// y NCHW from cuDNN, then the design's kernel.
Variant nchw_variant(const Context& cx, const KernelDesign& d, const ParamValues& point) {
  const bool reduce = cx.problem.reduce.has_value();
  Variant v;
  v.candidate = "epilogue";
  v.name = d.space.variant_name(d.prefix, point);
  SourceBuilder b(cx.options.problem_text, v.name, v.candidate);
  add_params(v, b, point.items);
  b.kernel(d.kernel_name);
  b.defines("problem shape", shape_defines(cx.s));
  b.template_file("ft_common.cuh");
  b.code("epilogue ops", epilogue_chain_code(cx.problem, cx.s));
  b.template_file(d.template_file);
  v.source = b.str();

  v.plan.push_back(conv_step(spec::Layout::nchw, false, "x"));
  // Pointwise runs in place: the output has y's shape and layout.
  const std::string out = reduce ? "out" : "y";
  v.plan.push_back(kernel_step(d.kernel_name, d.space.launch(point), {"y", out, "chan"}, "y", out));
  v.output_buffer = out;
  v.output_layout = reduce && cx.problem.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
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
  v.candidate = "epilogue";
  v.name = d.space.variant_name(d.prefix, point);
  SourceBuilder b(cx.options.problem_text, v.name, v.candidate);
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
  b.template_file(d.template_file);
  v.source = b.str();

  v.plan.push_back(transpose_step(wt, "w", "w_krsc", false));
  if (!x_is_nhwc) v.plan.push_back(transpose_step(xt, "x", "x_nhwc", true));
  v.plan.push_back(conv_step(spec::Layout::nhwc, false, x_is_nhwc ? "x" : "x_nhwc"));
  const std::string out = in_place ? "y" : "out";
  v.plan.push_back(kernel_step(d.kernel_name, d.space.launch(point), {"y", out, "chan"}, "y", out));
  v.output_buffer = out;
  if (reduce) {
    v.output_layout = cx.problem.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
  } else {
    v.output_layout = in_place ? spec::Layout::nhwc : spec::Layout::nchw;
  }
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
