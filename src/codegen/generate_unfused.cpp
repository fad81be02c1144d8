// The `unfused` candidate: what PyTorch eager runs. cuDNN's conv, the conv bias as its own
// elementwise kernel (PyTorch adds it with `output.add_(bias)` after cuDNN's conv;
// cudnnAddTensor measured 2.5x slower than a copy-speed kernel on the H200, which made this
// baseline slower than eager), then one out-of-place kernel per op, ping-ponging
// y -> tmp0 -> tmp1 -> ... -> out, and, like `.contiguous()` / `.to(memory_format=...)`, a final
// transpose when the requested output layout differs from the chain's.
//
// Two designs for an NCHW input, because eager has two ways to run the conv and picks the faster
// (torch.backends.cudnn.benchmark): cuDNN's NCHW algorithms (`unfused.nchw`), or an NHWC engine
// that transposes the input and the output around an NHWC convolution (`unfused.nhwc-conv`,
// what eager ran for both presets on the H200: docs/runs/2026-11-30/eager-profile-benchmark1.md).
// The op chain then runs on the NCHW tensor in both. The baseline is the faster of the two, so it
// is never slower than eager because of the conv it picked.
#include <optional>

#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

namespace {

// One kernel of the chain: its instantiation line, launch and bytes.
struct Kernel {
  std::string name;
  std::string define;  // FT_DEFINE_... line(s)
  LaunchConfig launch;
  double bytes = 0;
};

Kernel elementwise_kernel(int index, const Shape& s, bool after_reduce, int64_t block) {
  const int64_t elems = s.n * (after_reduce ? 1 : s.k) * s.pq;
  const int64_t vec = unfused_vec(elems);
  Kernel k;
  k.name = "ft_op" + std::to_string(index);
  k.define = "FT_DEFINE_UNFUSED_ELEMENTWISE(" + k.name + ", ft_apply_op" + std::to_string(index) + ", " +
             (after_reduce ? "1" : "FT_K") + ", " + std::to_string(vec) + ")\n";
  k.launch.grid = {uint32_t(ceil_div(elems, block * vec)), 1, 1};
  k.launch.block = {uint32_t(block), 1, 1};
  k.bytes = 2.0 * fp32_bytes(elems);
  return k;
}

Kernel reduce_kernel(int index, const Shape& s, int64_t block) {
  Kernel k;
  k.name = "ft_op" + std::to_string(index);
  k.define = "FT_DEFINE_UNFUSED_REDUCE(" + k.name + ", ft_reduce_init, ft_reduce_step, ft_reduce_finish)\n";
  k.launch.grid = {uint32_t(ceil_div(s.pixels(), block)), 1, 1};
  k.launch.block = {uint32_t(block), 1, 1};
  k.bytes = fp32_bytes(s.conv_out_elems()) + fp32_bytes(s.pixels());
  return k;
}

struct Chain {
  std::vector<Kernel> kernels;
  std::string functions;  // ft_apply_op<i> and the reduction's functions
};

Chain op_chain(const spec::Problem& problem, const Shape& s, int64_t block) {
  const ChanLayout chan = chan_layout(s);
  Chain c;
  int index = 0;
  if (s.conv_bias) {
    c.functions += "__device__ __forceinline__ float ft_apply_op0(float v, int k, const float* __restrict__ chan) {\n"
                   "  return v + chan[k];  // the conv bias: chan[0 .. K)\n}\n";
    c.kernels.push_back(elementwise_kernel(index++, s, false, block));
  }
  for (const auto& op : problem.pre) {
    c.functions += render_chain_function("ft_apply_op" + std::to_string(index), {op}, chan);
    c.kernels.push_back(elementwise_kernel(index++, s, false, block));
  }
  if (problem.reduce) {
    c.functions += render_reduce_functions(*problem.reduce, s.k);
    c.kernels.push_back(reduce_kernel(index++, s, block));
    for (const auto& op : problem.post) {
      c.functions += render_chain_function("ft_apply_op" + std::to_string(index), {op}, chan);
      c.kernels.push_back(elementwise_kernel(index++, s, true, block));
    }
  }
  return c;
}

// conv_layout: the layout cuDNN's conv runs in; chain_layout: the layout of the op chain
// (NCHW for an NCHW input, whichever conv runs; NHWC for an NHWC input).
Variant unfused_variant(const spec::Problem& problem, const Shape& s, const GenerateOptions& options,
                        spec::Layout conv_layout, spec::Layout chain_layout) {
  const bool x_is_nhwc = problem.conv.in == spec::Layout::nhwc;
  const bool nhwc_conv = conv_layout == spec::Layout::nhwc;
  const KernelDesign d = unfused_design(s, chain_layout == spec::Layout::nhwc ? kLayoutNhwc : kLayoutNchw);
  const ParamValues point = d.space.enumerate().at(0);
  const int64_t block = point.at("unfused_block");
  const Chain chain = op_chain(problem, s, block);

  // The layout the caller asked for; a reduced (N, 1, P, Q) output is the same in both.
  const spec::Layout want = problem.conv.out == spec::Layout::any ? chain_layout : problem.conv.out;
  std::optional<TransposeConfig> to_out;
  if (!problem.reduce && want != chain_layout) {
    to_out = chain_layout == spec::Layout::nhwc ? nhwc_to_nchw(s, "NHWC (N, P*Q, K) -> NCHW (N, K, P*Q)")
                                                : nchw_to_nhwc(s, "NCHW (N, K, P*Q) -> NHWC (N, P*Q, K)");
  }
  // An NHWC conv feeding an NCHW chain: the input transposed in, the conv output transposed back.
  const bool around = nhwc_conv && chain_layout == spec::Layout::nchw;
  const std::optional<TransposeConfig> xt = nhwc_conv && !x_is_nhwc ? std::optional(x_to_nhwc(s)) : std::nullopt;
  const std::optional<TransposeConfig> yt =
      around ? std::optional(nhwc_to_nchw(s, "y_nhwc (N, P*Q, K) -> y (N, K, P*Q), eager's NCHW conv output"))
             : std::nullopt;
  const std::optional<TransposeConfig> wt = nhwc_conv ? std::optional(w_to_krsc(s)) : std::nullopt;

  Variant v;
  v.candidate = Candidate::unfused;
  v.design = v.name = around ? "unfused.nhwc-conv" : d.prefix;
  SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(v.candidate)));
  add_params(v, b, point.items);
  if (around) add_params(v, b, {{"conv_layout", kLayoutNhwc}});
  if (xt) add_params(v, b, xt->params());
  if (wt) b.kernel(wt->kernel_name);
  if (xt) b.kernel(xt->kernel_name);
  if (yt) b.kernel(yt->kernel_name);
  for (const auto& k : chain.kernels) b.kernel(k.name);
  if (to_out) b.kernel(to_out->kernel_name);
  b.defines("problem shape", shape_defines(s));
  b.template_file("ft_common.cuh");
  const bool transforms = wt || xt || yt || to_out;
  if (transforms) b.template_file("ft_transpose.cuh");
  if (!chain.functions.empty()) b.code("ops, one function each", chain.functions);
  b.template_file("unfused_ops.cu");
  std::string defines;
  for (const auto& k : chain.kernels) defines += k.define;
  if (!defines.empty()) b.code("one kernel per op", defines);
  if (transforms) {
    b.template_file("transform_nchw_to_nhwc.cu");
    b.code("layout transforms", (wt ? wt->instantiation() : "") + (xt ? xt->instantiation() : "") +
                                    (yt ? yt->instantiation() : "") + (to_out ? to_out->instantiation() : ""));
  }
  v.source = b.str();

  PlanBuilder pb(problem, v);
  BufferRef filters = pb.w();
  if (wt) {
    const BufferRef wk = pb.w_krsc();
    pb.transpose(*wt, filters, wk, false);
    filters = wk;
  }
  BufferRef in = pb.x();
  if (xt) {
    const BufferRef xn = pb.x_nhwc();
    pb.transpose(*xt, in, xn, true);
    in = xn;
  }
  BufferRef cur = around ? pb.conv_shaped("y_nhwc", spec::Layout::nhwc, s.k, "the conv output, channels-last")
                         : pb.y(chain_layout);
  pb.conv(conv_layout, in, filters, cur, false);
  if (yt) {
    const BufferRef y = pb.y(spec::Layout::nchw);
    pb.transpose(*yt, cur, y, true);
    v.kernel_bytes += yt->bytes();
    cur = y;
  }
  if (xt) v.kernel_bytes += xt->bytes();

  const spec::Layout final_layout =
      problem.reduce ? (problem.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw) : want;
  const size_t steps = chain.kernels.size() + (to_out ? 1 : 0);
  const BufferRef chan = pb.chan();
  for (size_t i = 0; i < steps; ++i) {
    const BufferRef next = i + 1 == steps ? pb.out(final_layout)
                                          : pb.conv_shaped("tmp" + std::to_string(i % 2), chain_layout, s.k,
                                                           "scratch of conv-output size (after a channel reduction "
                                                           "only (N, 1, P, Q) of it is used)");
    if (i < chain.kernels.size()) {
      pb.kernel(chain.kernels[i].name, chain.kernels[i].launch, {cur, next, chan}, {1});
      v.kernel_bytes += chain.kernels[i].bytes;
    } else {
      pb.transpose(*to_out, cur, next, true);
      v.kernel_bytes += to_out->bytes();
    }
    cur = next;
  }
  pb.set_output(cur, final_layout);
  return v;
}

}  // namespace

std::vector<Variant> generate_unfused(const spec::Problem& problem, const Shape& s, const GenerateOptions& options) {
  if (problem.conv.in == spec::Layout::nhwc)
    return {unfused_variant(problem, s, options, spec::Layout::nhwc, spec::Layout::nhwc)};
  std::vector<Variant> out{unfused_variant(problem, s, options, spec::Layout::nchw, spec::Layout::nchw)};
  if (options.channels_last) out.push_back(unfused_variant(problem, s, options, spec::Layout::nhwc, spec::Layout::nchw));
  return out;
}

}  // namespace fusetune::codegen
