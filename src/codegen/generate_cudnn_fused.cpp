// The `cudnn-fused` candidate: cuDNN's runtime fusion through its graph API. One graph runs the
// conv, its bias, the ops before the reduction and the channel reduction (gpu/cudnn_graph.hpp);
// generated kernels do what the graph cannot:
//   - the filters to KRSC, once, untimed (a parameter transform, as in every channels-last design);
//   - x to channels-last first, for design `cudnn-fused.x-nhwc` (`cudnn-fused.x-nchw` hands cuDNN
//     the NCHW input as it lies: cuDNN's fused engines may or may not take it; it says which);
//   - after a reduction: mean's 1/K and the ops after the reduction, in place on (N, 1, P, Q);
//   - without one: the transpose of the NHWC result to NCHW when the spec asks for NCHW
//     (cuDNN's fused engines write channels-last only).
// The variants made here are templates without an engine configuration: the tuner makes one
// variant per configuration the GPU's cuDNN offers (codegen/cudnn_engine.hpp).
#include <optional>

#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

namespace {

// After a reduction: v = finish(acc = v), then the post ops. Empty when there is nothing to do.
std::string tail_code(const spec::Problem& problem, const Shape& s) {
  if (!problem.reduce) return "";
  const ReduceExprs r = render_reduce(*problem.reduce, s.k);
  if (problem.post.empty() && r.finish == "acc") return "";
  return render_chain_function("ft_post", problem.post, chan_layout(s)) +
         "__device__ __forceinline__ float ft_tail(float acc, int k, const float* __restrict__ chan) {\n"
         "  // the reduction's finish, then the ops after it\n"
         "  return ft_post(" + r.finish + ", k, chan);\n}\n";
}

Variant cudnn_fused_variant(const spec::Problem& problem, const Shape& s, const GenerateOptions& options,
                            spec::Layout graph_in) {
  const bool x_is_nhwc = problem.conv.in == spec::Layout::nhwc;
  const bool transform_x = graph_in == spec::Layout::nhwc && !x_is_nhwc;
  const std::string tail = tail_code(problem, s);
  const spec::Layout want = problem.conv.out == spec::Layout::any ? spec::Layout::nhwc : problem.conv.out;
  const bool to_nchw = !problem.reduce && want == spec::Layout::nchw;

  Variant v;
  v.candidate = Candidate::cudnn_fused;
  v.design = v.name = graph_in == spec::Layout::nhwc ? "cudnn-fused.x-nhwc" : "cudnn-fused.x-nchw";
  const TransposeConfig wt = w_to_krsc(s);
  const TransposeConfig xt = x_to_nhwc(s);
  const TransposeConfig yt = nhwc_to_nchw(s, "y_nhwc (N, P*Q, K) -> out (N, K, P*Q): the spec asks for NCHW");
  const ParamValues unfused = unfused_design(s, kLayoutNhwc).space.enumerate().at(0);
  const int64_t block = unfused.at("unfused_block");
  const int64_t tail_elems = s.pixels();
  const int64_t tail_vec = unfused_vec(tail_elems);

  SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(v.candidate)));
  add_params(v, b, {{"graph_in", graph_in == spec::Layout::nhwc ? kLayoutNhwc : kLayoutNchw}});
  if (transform_x) add_params(v, b, xt.params());
  if (!tail.empty()) add_params(v, b, unfused.items);
  b.kernel(wt.kernel_name);
  if (transform_x) b.kernel(xt.kernel_name);
  if (!tail.empty()) b.kernel("ft_tail_kernel");
  if (to_nchw) b.kernel(yt.kernel_name);
  b.defines("problem shape", shape_defines(s));
  b.template_file("ft_common.cuh");
  b.template_file("ft_transpose.cuh");
  if (!tail.empty()) {
    b.code("after the reduction", tail);
    b.template_file("unfused_ops.cu");
    b.code("the tail, in place on (N, 1, P, Q)",
           "FT_DEFINE_UNFUSED_ELEMENTWISE(ft_tail_kernel, ft_tail, 1, " + std::to_string(tail_vec) + ")\n");
  }
  b.template_file("transform_nchw_to_nhwc.cu");
  b.code("layout transforms",
         wt.instantiation() + (transform_x ? xt.instantiation() : "") + (to_nchw ? yt.instantiation() : ""));
  v.source = b.str();

  PlanBuilder pb(problem, v);
  const BufferRef wk = pb.w_krsc();
  pb.transpose(wt, pb.w(), wk, false);
  BufferRef in = pb.x();
  if (transform_x) {
    const BufferRef xn = pb.x_nhwc();
    pb.transpose(xt, in, xn, true);
    v.kernel_bytes += xt.bytes();
    in = xn;
  }
  if (problem.reduce) {
    // (N, 1, P, Q) is the same memory in either layout: the graph writes the output itself.
    const spec::Layout final_layout = problem.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
    const BufferRef out = pb.out(final_layout);
    pb.graph(graph_in, in, wk, out, true);
    if (!tail.empty()) {
      LaunchConfig l;
      l.grid = {uint32_t(ceil_div(tail_elems, block * tail_vec)), 1, 1};
      l.block = {uint32_t(block), 1, 1};
      pb.kernel("ft_tail_kernel", l, {out, out, pb.chan()}, {1});
      v.kernel_bytes += 2.0 * fp32_bytes(tail_elems);
    }
    pb.set_output(out, final_layout);
  } else if (to_nchw) {
    const BufferRef y = pb.conv_shaped("y_nhwc", spec::Layout::nhwc, s.k, "the graph's output, channels-last");
    pb.graph(graph_in, in, wk, y, true);
    const BufferRef out = pb.out(spec::Layout::nchw);
    pb.transpose(yt, y, out, true);
    v.kernel_bytes += yt.bytes();
    pb.set_output(out, spec::Layout::nchw);
  } else {
    const BufferRef out = pb.out(spec::Layout::nhwc);
    pb.graph(graph_in, in, wk, out, true);
    pb.set_output(out, spec::Layout::nhwc);
  }
  return v;
}

}  // namespace

std::vector<Variant> generate_cudnn_fused(const spec::Problem& problem, const Shape& s, const GenerateOptions& options) {
  std::vector<Variant> out;
  if (problem.conv.in == spec::Layout::nchw) out.push_back(cudnn_fused_variant(problem, s, options, spec::Layout::nchw));
  if (options.channels_last || problem.conv.in == spec::Layout::nhwc)
    out.push_back(cudnn_fused_variant(problem, s, options, spec::Layout::nhwc));
  return out;
}

}  // namespace fusetune::codegen
