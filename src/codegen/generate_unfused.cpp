// The `unfused` candidate: what PyTorch eager runs. cuDNN's conv in the input's layout, the conv
// bias as its own elementwise kernel (PyTorch adds it with `output.add_(bias)` after cuDNN's
// conv; cudnnAddTensor measured 2.5x slower than a copy-speed kernel on the H200, which made
// this baseline slower than eager), then one out-of-place kernel per op, ping-ponging
// y -> tmp0 -> tmp1 -> ... -> out,
// and, like `.contiguous()` / `.to(memory_format=...)`, a final transpose when the requested
// output layout differs from the conv's.
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

}  // namespace

std::vector<Variant> generate_unfused(const spec::Problem& problem, const Shape& s, const GenerateOptions& options) {
  const bool nhwc = problem.conv.in == spec::Layout::nhwc;
  const spec::Layout layout = nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
  const KernelDesign d = unfused_design(s, nhwc ? kLayoutNhwc : kLayoutNchw);
  const ParamValues point = d.space.enumerate().at(0);
  const int64_t block = point.at("unfused_block");
  const ChanLayout chan = chan_layout(s);

  // The chain's kernels and the device functions they apply.
  std::vector<Kernel> kernels;
  std::string functions;
  int index = 0;
  if (s.conv_bias) {
    functions += "__device__ __forceinline__ float ft_apply_op0(float v, int k, const float* __restrict__ chan) {\n"
                 "  return v + chan[k];  // the conv bias: chan[0 .. K)\n}\n";
    kernels.push_back(elementwise_kernel(index++, s, false, block));
  }
  for (const auto& op : problem.pre) {
    functions += render_chain_function("ft_apply_op" + std::to_string(index), {op}, chan);
    kernels.push_back(elementwise_kernel(index++, s, false, block));
  }
  if (problem.reduce) {
    functions += render_reduce_functions(*problem.reduce, s.k);
    kernels.push_back(reduce_kernel(index++, s, block));
    for (const auto& op : problem.post) {
      functions += render_chain_function("ft_apply_op" + std::to_string(index), {op}, chan);
      kernels.push_back(elementwise_kernel(index++, s, true, block));
    }
  }

  // The layout the caller asked for; a reduced (N, 1, P, Q) output is the same in both.
  const spec::Layout want = problem.conv.out == spec::Layout::any ? layout : problem.conv.out;
  std::optional<TransposeConfig> to_out;
  if (!problem.reduce && want != layout) {
    to_out = layout == spec::Layout::nhwc
                 ? default_transpose("ft_to_nchw", "NHWC (N, P*Q, K) -> NCHW (N, K, P*Q)", s.n, s.pq, s.k)
                 : default_transpose("ft_to_nhwc", "NCHW (N, K, P*Q) -> NHWC (N, P*Q, K)", s.n, s.k, s.pq);
  }

  Variant v;
  v.candidate = "unfused";
  v.name = d.prefix;
  SourceBuilder b(options.problem_text, v.name, v.candidate);
  for (const auto& [name, value] : point.items) {
    v.params.emplace_back(name, value);
    b.param(name, value);
  }
  const std::optional<TransposeConfig> wt = nhwc ? std::optional(w_to_krsc(s)) : std::nullopt;
  if (wt) b.kernel(wt->kernel_name);
  for (const auto& k : kernels) b.kernel(k.name);
  if (to_out) b.kernel(to_out->kernel_name);
  b.defines("problem shape", shape_defines(s));
  b.template_file("ft_common.cuh");
  if (wt || to_out) b.template_file("ft_transpose.cuh");
  if (!functions.empty()) b.code("ops, one function each", functions);
  b.template_file("unfused_ops.cu");
  std::string defines;
  for (const auto& k : kernels) defines += k.define;
  if (!defines.empty()) b.code("one kernel per op", defines);
  if (wt || to_out) {
    b.template_file("transform_nchw_to_nhwc.cu");
    b.code("layout transforms", (wt ? wt->instantiation() : "") + (to_out ? to_out->instantiation() : ""));
  }
  v.source = b.str();

  if (wt) v.plan.push_back(transpose_step(*wt, "w", "w_krsc", false));
  v.plan.push_back(conv_step(layout, false, "x"));
  const size_t steps = kernels.size() + (to_out ? 1 : 0);
  std::string in = "y";
  for (size_t i = 0; i < steps; ++i) {
    const std::string out = i + 1 == steps ? "out" : "tmp" + std::to_string(i % 2);
    if (i < kernels.size()) {
      v.plan.push_back(kernel_step(kernels[i].name, kernels[i].launch, {in, out, "chan"}, in, out));
      v.kernel_bytes += kernels[i].bytes;
    } else {
      v.plan.push_back(transpose_step(*to_out, in, out, true));
      v.kernel_bytes += to_out->bytes();
    }
    in = out;
  }
  v.output_buffer = steps == 0 ? "y" : "out";
  v.output_layout = problem.reduce ? (problem.conv.out == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw)
                                   : want;
  return {v};
}

}  // namespace fusetune::codegen
