// The `fused-gemm` candidate: no cuBLAS. W is packed once (untimed: it is a parameter), the bias
// and per-feature parameters gathered into one channel vector (untimed), then ONE generated kernel
// computes the GEMM with wgmma and applies bias + the chain-form epilogue (+ its reduction over the
// features) to its accumulators: the GEMM's output never reaches memory. A reduction split across
// column tiles adds a small combine kernel. sm_90 only.
#include <fmt/format.h>

#include "codegen/designs.hpp"
#include "codegen/gemm_epilogue.hpp"
#include "codegen/generate_parts.hpp"
#include "codegen/model_buffers.hpp"
#include "codegen/stage_source.hpp"

namespace fusetune::codegen {

namespace {

constexpr const char* kPackKernel = "ft_fused_gemm_pack";
constexpr const char* kChanKernel = "ft_fused_gemm_chan";
constexpr const char* kCombineKernel = "ft_fused_gemm_combine";

// The chain renderer's view of the GEMM: N features, each with the bias and parameter vectors.
Shape chain_shape(const spec::Problem& p) {
  Shape s;
  s.k = p.gemm.n;
  s.conv_bias = main_has_bias(p);
  s.num_params = int(general_epilogue(p).param_shapes.size());
  return s;
}

std::string gemm_defines(const spec::Problem& p, const Shape& s) {
  const spec::Gemm& g = p.gemm;
  return fmt::format(
      "#define FT_GM {}  // GEMM M: rows of x\n"
      "#define FT_GK {}  // GEMM K: x's row length\n"
      "#define FT_GN {}  // GEMM N: output features\n"
      "#define FT_K FT_GN  // the features, as the shared helpers name the channel count\n"
      "#define FT_HAS_BIAS {}  // the epilogue adds the bias chan[0 .. N)\n"
      "#define FT_NUM_PARAMS {}  // per-feature parameter vectors after the bias in chan\n"
      "#define FT_CHAN_FLOATS {}  // floats in chan\n",
      g.m, g.k, g.n, s.conv_bias ? 1 : 0, s.num_params, s.chan_floats());
}

// chan = [bias][param 0][param 1]..., N floats each, from the plan's separate tensors: the layout
// the rendered chain reads (ChanLayout). Its argument list follows the problem, hence generated.
std::string chan_kernel(int64_t vectors) {
  std::string args, body;
  for (int64_t i = 0; i < vectors; ++i) {
    args += fmt::format("const float* __restrict__ v{}, ", i);
    body += fmt::format("  chan[{} * (long long)FT_GN + i] = v{}[i];\n", i, i);
  }
  return fmt::format(
      "// The bias and the per-feature parameters gathered into chan (untimed: they are parameters).\n"
      "extern \"C\" __global__ void __launch_bounds__(256) {}({}float* __restrict__ chan) {{\n"
      "  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;\n"
      "  if (i >= FT_GN) return;\n{}}}\n",
      kChanKernel, args, body);
}

Variant fused_gemm_variant(const spec::Problem& p, const GenerateOptions& options, const KernelDesign& d,
                           const ParamValues& point) {
  const spec::Gemm& g = p.gemm;
  const Shape s = chain_shape(p);
  const int64_t csplit = point.at("csplit");
  const GemmEpilogue epilogue = gemm_epilogue(p).value();
  const bool reduce = epilogue.reduce != GemmReduce::none;
  const int64_t row_floats = epilogue.reduce == GemmReduce::logsumexp ? 2 : 1;  // ft_lse.cuh: shift and sum
  const bool combine = reduce && csplit > 1;
  Variant v;
  v.candidate = Candidate::fused_gemm;
  v.design = d.prefix;
  v.name = d.space.variant_name(d.prefix, point);
  v.arch_specific = true;  // wgmma: sm_90a
  SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(v.candidate)));
  add_params(v, b, point.items);
  add_params(v, b, {{"smem_bytes", fused_gemm_smem_bytes(point)}});
  b.kernel(kPackKernel);
  if (s.chan_vectors() > 0) b.kernel(kChanKernel);
  b.kernel(d.kernel_name);
  if (combine) b.kernel(kCombineKernel);
  b.defines("problem shape", gemm_defines(p, s));
  b.template_file("ft_common.cuh");
  b.template_file("ft_wgmma.cuh");
  b.template_file("ft_tf32.cuh");
  if (epilogue.reduce == GemmReduce::logsumexp) b.template_file("ft_lse.cuh");
  b.code("epilogue ops", render_gemm_epilogue(epilogue, ChanLayout{s.k, s.conv_bias}));
  if (s.chan_vectors() > 0) b.code("channel vectors", chan_kernel(s.chan_vectors()));
  b.template_file(d.template_file);
  v.source = b.str();

  // Buffers: the problem's tensors as PyTorch holds them, then the plan's scratch.
  const MainBuffers m = add_main_inputs(v, p);
  const BufferRef x = m.x, w = m.w;
  std::vector<KernelArg> vectors;
  if (m.bias) vectors.emplace_back(*m.bias);
  for (BufferRef r : add_param_buffers(v, p, general_epilogue(p).param_shapes)) vectors.emplace_back(r);
  const BufferRef wpack =
      add_buffer(v, {"wpack", BufferKind::scratch, TensorLayout::row_major, {{"floats", fused_gemm_pack_floats(g, point)}},
                     point.at("split") ? "W packed for ft_fused_gemm: N rounded up to bn by K rounded up to 32, one "
                                         "swizzled bn x 32 block per column tile and K tile of the TF32 big parts, "
                                         "then one of the TF32-rounded remainders (3xTF32)"
                                       : "W packed for ft_fused_gemm: N rounded up to bn by K rounded up to 32, "
                                         "TF32, one swizzled bn x 32 block per column tile and K tile"});
  KernelArg chan = NullArg{};
  if (s.chan_vectors() > 0)
    chan = add_buffer(v, {"chan", BufferKind::scratch, TensorLayout::row_major, {{"floats", s.chan_floats()}},
                          "the bias and per-feature parameters, N floats each"});
  const BufferRef out = add_buffer(v, {"y", BufferKind::scratch, TensorLayout::row_major,
                                       shape_dims(p, spec::out_shape(p), !reduce), "the problem's output"});

  add_kernel(v, kPackKernel, pack_launch(fused_gemm_pack_floats(g, point)), {w, wpack}, {1}, false);
  if (s.chan_vectors() > 0) {
    std::vector<KernelArg> args = vectors;
    args.push_back(chan);
    add_kernel(v, kChanKernel, pack_launch(g.n), std::move(args), {vectors.size()}, false);
  }
  if (combine) {
    const BufferRef part =
        add_buffer(v, {"part", BufferKind::scratch, TensorLayout::row_major,
                       {{"csplit", csplit}, {"state", row_floats}, {"m", g.m}}, "each column split's partial reduction"});
    add_kernel(v, d.kernel_name, d.space.launch(point), {x, wpack, part, chan}, {2}, true);
    add_kernel(v, kCombineKernel, pack_launch(g.m), {part, out, chan}, {1}, true);
  } else {
    add_kernel(v, d.kernel_name, d.space.launch(point), {x, wpack, out, chan}, {2}, true);
  }
  v.output = out;
  v.output_layout = spec::Layout::nchw;
  // x read once, the output written once (the packed W is re-read per row tile, mostly from L2).
  v.kernel_bytes = fp32_bytes(g.m * g.k) + fp32_bytes(fused_gemm_pack_floats(g, point)) +
                   fp32_bytes(spec::elems(spec::out_shape(p)));
  return v;
}

// The problem without its epilogue: the GEMM (+ bias) alone, as a main step before stage kernels.
spec::Problem gemm_alone(const spec::Problem& p) {
  spec::Problem g;
  g.main = p.main;
  g.gemm = p.gemm;
  return g;
}

}  // namespace

std::vector<ParamValues> fused_gemm_main_points(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                                const GenerateOptions& options) {
  const spec::Problem g = gemm_alone(problem);
  if (gemm_epilogue(problem) || !fused_gemm_applies(g, limits)) return {};
  std::vector<ParamValues> points = fused_gemm_design(g, limits, options.strict_fp32).space.enumerate();
  // A few tiles, not the whole space: the stage kernels after it are the plan's other half.
  std::erase_if(points, [](const ParamValues& v) { return v.at("stages") != 4; });
  return points;
}

std::string fused_gemm_main(const spec::Problem& problem, const gpu::DeviceLimits& limits, const GenerateOptions& options,
                            const ParamValues& point, Variant& v, BufferRef x, BufferRef w, std::optional<BufferRef> bias,
                            BufferRef out) {
  const spec::Problem p = gemm_alone(problem);
  const KernelDesign d = fused_gemm_design(p, limits, options.strict_fp32);
  const Shape s = chain_shape(p);
  v.arch_specific = true;  // wgmma: sm_90a
  SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(Candidate::fused_gemm)));
  add_params(v, b, point.items);
  add_params(v, b, {{"smem_bytes", fused_gemm_smem_bytes(point)}});
  b.kernel(kPackKernel);
  b.kernel(d.kernel_name);
  b.defines("problem shape (the GEMM alone: its epilogue runs as the stage kernels before this source)",
            gemm_defines(p, s));
  b.template_file("ft_common.cuh");
  b.template_file("ft_wgmma.cuh");
  b.template_file("ft_tf32.cuh");
  b.code("epilogue ops", render_gemm_epilogue(GemmEpilogue{}, ChanLayout{s.k, s.conv_bias}));
  b.template_file(d.template_file);
  const BufferRef wpack =
      add_buffer(v, {"wpack", BufferKind::scratch, TensorLayout::row_major,
                     {{"floats", fused_gemm_pack_floats(p.gemm, point)}}, "W packed for ft_fused_gemm (untimed)"});
  add_kernel(v, kPackKernel, pack_launch(fused_gemm_pack_floats(p.gemm, point)), {w, wpack}, {1}, false);
  // The bias is the whole channel vector ([bias], N floats): no gathering kernel.
  std::vector<KernelArg> args = {x, wpack, out};
  args.push_back(buffer_or_null(bias));  // (in the braces GCC 12 warns of a variant maybe uninitialized)
  add_kernel(v, d.kernel_name, d.space.launch(point), std::move(args), {2}, true);
  return b.str();
}

std::vector<Variant> generate_fused_gemm(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                         const GenerateOptions& options) {
  if (!fused_gemm_applies(problem, limits)) return {};
  // --math fp32: only the 3xTF32 design (TF32 products cannot pass the fp32 rule), as fused-conv.
  const KernelDesign d = fused_gemm_design(problem, limits, options.strict_fp32);
  std::vector<Variant> out;
  for (const auto& point : d.space.enumerate()) out.push_back(fused_gemm_variant(problem, options, d, point));
  return out;
}

}  // namespace fusetune::codegen
