// The `fused-conv` candidate: no cuDNN. The filters are packed once (an untimed parameter
// transform, like the channels-last designs' w -> w_krsc), then ONE generated kernel computes
// the convolution as an implicit GEMM with wgmma and applies bias + the whole epilogue (+ the
// reduction) to its accumulators: the conv output never reaches memory. sm_90 only. Two
// designs: fused_conv.cu (gathers the im2col tile; any input layout) and fused_conv_halo.cu
// (loads the input tile with its halo once per channel chunk; NCHW input).
#include <algorithm>
#include <optional>
#include <string>

#include "codegen/designs.hpp"
#include "codegen/generate_parts.hpp"
#include "codegen/model_buffers.hpp"

namespace fusetune::codegen {

namespace {

constexpr const char* kPackKernel = "ft_fused_conv_pack";

// Bytes the fused kernel must move: x read once, the output written once (the packed filters
// and per-channel vectors are small and stay in L2).
double fused_conv_bytes(const spec::Problem& problem, const Shape& s) {
  return fp32_bytes(s.input_elems()) + fp32_bytes(problem.reduce ? s.pixels() : s.conv_out_elems());
}

// What differs between the two designs' variants: the template's derived parameters, and the
// packed filters' extents and pack launch.
struct DesignPlan {
  std::vector<std::pair<std::string, int64_t>> derived;  // written as #defines, stored as params
  std::vector<std::pair<std::string, int64_t>> pack_dims;  // after KN_PAD
  LaunchConfig pack;
  std::string pack_what;  // the packed filters' description in the plan
  std::vector<std::string> helpers = {};  // templates pasted after ft_wgmma.cuh
};

std::vector<std::pair<std::string, int64_t>> with_kn_pad(int64_t kn_pad,
                                                        std::vector<std::pair<std::string, int64_t>> dims) {
  dims.insert(dims.begin(), {"KN_PAD", kn_pad});
  return dims;
}

// The source of a fused-conv variant of `problem` (chain form) at `point`; the parameters go to
// v.params as they go to the source.
std::string fused_conv_source(const spec::Problem& problem, const Shape& s, const GenerateOptions& options,
                              const KernelDesign& d, const ParamValues& point, const DesignPlan& dp, Variant& v,
                              const std::string& shape_title = "problem shape") {
  v.arch_specific = true;  // wgmma: sm_90a
  SourceBuilder b(options.problem_text, v.name, std::string(candidate_name(Candidate::fused_conv)));
  add_params(v, b, point.items);
  // Derived, not searched: the kernel checks its shared-memory carve-up against the launch's.
  add_params(v, b, dp.derived);
  b.kernel(kPackKernel);
  b.kernel(d.kernel_name);
  b.defines(shape_title, shape_defines(s));
  b.defines("conv geometry", conv_geometry_defines(problem));
  b.template_file("ft_common.cuh");
  b.template_file("ft_wgmma.cuh");  // the template's wgmma, mbarrier and cp.async helpers
  for (const auto& f : dp.helpers) b.template_file(f);
  b.code("epilogue ops", epilogue_chain_code(problem, s));
  b.template_file(d.template_file);
  return b.str();
}

Variant fused_conv_variant(const spec::Problem& problem, const Shape& s, const GenerateOptions& options,
                           const KernelDesign& d, const ParamValues& point, const DesignPlan& dp) {
  const spec::Layout layout = fused_conv_out_layout(problem);
  const int64_t bn = point.at("bn");
  Variant v;
  v.candidate = Candidate::fused_conv;
  v.design = d.prefix;
  v.name = d.space.variant_name(d.prefix, point);
  v.source = fused_conv_source(problem, s, options, d, point, dp, v);

  PlanBuilder pb(problem, v);
  const BufferRef x = pb.x();
  const BufferRef w = pb.w();
  const BufferRef chan = pb.chan();
  const BufferRef wpack = pb.scratch(
      "wpack", TensorLayout::vector, with_kn_pad(fused_conv_kn_pad(s, bn), dp.pack_dims), dp.pack_what);
  pb.kernel(kPackKernel, dp.pack, {w, wpack}, {1}, false);
  const BufferRef out = pb.out(layout);
  pb.kernel(d.kernel_name, d.space.launch(point), {x, wpack, out, chan}, {2});
  pb.set_output(out, layout);
  v.kernel_bytes = fused_conv_bytes(problem, s);
  return v;
}

// fused_conv.cu gathers every im2col element itself, so it reads NHWC input too; below 32
// input channels it may also waste less of each 32-wide K tile than the halo design (C = 24:
// 216 -> 224 here, 288 there; below 17 channels the halo's K tiles of several taps pad C = 8's
// 72 to 96 as this does), so it stays offered there. For NCHW input with
// 32 or more channels the halo design is faster on every shape measured (docs/perf-notes.md:
// 1.10 against 3.24 ms on kernelbench-31's shape), so the gather design is left out there,
// unless the halo design has no point for the problem (its halo buffers outgrow shared memory,
// or its channel padding makes the packed filters too large).
// Where the halo design has points only with chunks of 16 channels past 16 input channels (its
// shared-memory fallback, c16), the gather design stays offered beside them.
bool gather_design_applies(const spec::Problem& problem, const std::vector<ParamValues>& halo_points) {
  return !fused_conv_halo_applies(problem) || problem.conv.c < 32 || halo_points.empty() ||
         halo_conv_cp(halo_points.front()) == 16;
}

DesignPlan halo_design_plan(const spec::Conv& conv, const Shape& s, const ParamValues& point, bool split) {
  std::vector<std::pair<std::string, int64_t>> dims = {{"KG_PAD", halo_conv_kg_pad(s.c, s.rs, halo_conv_cp(point))}};
  if (split) dims.emplace_back("PARTS", 2);
  // (past 16 input channels the K extent reads as before cp existed: those plans, and so the
  // shipped records' provenance, are unchanged)
  const std::string k_extent = halo_conv_cp(point) == 32 && halo_conv_min_cp(s.c) == 32
                                   ? "(C rounded up to 32) x R*S"
                                   : "(C rounded up to cp) x (R*S rounded up to 32/cp)";
  return DesignPlan{{{"tq", 128 / point.at("tp")}, {"smem_bytes", halo_conv_smem_bytes(conv, s, point)}},
                    dims,
                    halo_conv_pack_launch(s, point),
                    split ? "the filters packed for ft_fused_conv: K rounded up to bn by " + k_extent +
                                ", zero-padded, one swizzled bn x 32 block per column tile and K tile of the TF32 big "
                                "parts, then one of the TF32-rounded remainders (3xTF32)"
                          : "the filters packed for ft_fused_conv: K rounded up to bn by " + k_extent +
                                ", zero-padded, TF32, one swizzled bn x 32 block per column tile and K tile",
                    {"ft_tf32.cuh"}};
}

// A version-2 problem's conv2d as a chain problem with no epilogue: the halo kernel then computes
// the conv and its bias, NCHW in and out (version-2 plans are channels-first).
spec::Problem conv_alone(const spec::Problem& p) {
  spec::Problem c;
  c.main = spec::MainKind::conv2d;
  c.conv = p.conv;
  c.conv.in = c.conv.out = spec::Layout::nchw;
  return c;
}

}  // namespace

std::vector<ParamValues> fused_conv_main_points(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                                const GenerateOptions& options) {
  if (problem.main != spec::MainKind::conv2d || problem.conv.groups != 1 || problem.conv.transposed ||
      !fused_conv_applies(limits))
    return {};
  const spec::Problem c = conv_alone(problem);
  std::vector<ParamValues> points = fused_conv_halo_design(shape_of(c), limits, c, options.strict_fp32).space.enumerate();
  // A few tiles, not the whole space (the stage kernels after it are the plan's other half): 4 x 32
  // pixels, the tile the presets' winners took (else the nearest the space has: narrow images),
  // and 6 stages (or the deepest that fits); every bn, epilogue placement and cp.
  int64_t tp = 0;
  for (const int64_t want : {4, 8, 2, 1})
    if (tp == 0 && std::any_of(points.begin(), points.end(), [&](const ParamValues& v) { return v.at("tp") == want; }))
      tp = want;
  std::erase_if(points, [&](const ParamValues& v) { return v.at("tp") != tp; });
  int64_t deepest = 0;
  for (const ParamValues& v : points) deepest = std::max(deepest, v.at("stages"));
  std::erase_if(points, [&](const ParamValues& v) { return v.at("stages") != std::min<int64_t>(deepest, 6); });
  return points;
}

std::string fused_conv_main_name(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                 const GenerateOptions& options, const ParamValues& point, const std::string& prefix) {
  const spec::Problem c = conv_alone(problem);
  return fused_conv_halo_design(shape_of(c), limits, c, options.strict_fp32).space.variant_name(prefix, point);
}

std::string fused_conv_main(const spec::Problem& problem, const gpu::DeviceLimits& limits, const GenerateOptions& options,
                            const ParamValues& point, Variant& v, BufferRef x, BufferRef w, std::optional<BufferRef> bias,
                            BufferRef out) {
  const spec::Problem c = conv_alone(problem);
  const Shape s = shape_of(c);
  const bool split = options.strict_fp32;
  const KernelDesign d = fused_conv_halo_design(s, limits, c, split);
  const DesignPlan dp = halo_design_plan(c.conv, s, point, split);
  const std::string source = fused_conv_source(
      c, s, options, d, point, dp, v, "problem shape (the conv alone: its epilogue runs as the stage kernels before this source)");
  const BufferRef wpack =
      add_buffer(v, {"wpack", BufferKind::scratch, TensorLayout::row_major,
                     with_kn_pad(fused_conv_kn_pad(s, point.at("bn")), dp.pack_dims), dp.pack_what});
  add_kernel(v, kPackKernel, dp.pack, {w, wpack}, {1}, false);
  // The channel vector is the conv's bias alone (K floats): no gathering kernel.
  std::vector<KernelArg> args = {x, wpack, out};
  args.push_back(buffer_or_null(bias));  // (in the braces GCC 12 warns of a variant maybe uninitialized)
  add_kernel(v, d.kernel_name, d.space.launch(point), std::move(args), {2}, true);
  return source;
}

std::vector<Variant> generate_fused_conv(const spec::Problem& problem, const Shape& s, const gpu::DeviceLimits& limits,
                                         const GenerateOptions& options) {
  // wgmma is in sm_90a only: other devices (and GPU-free `compile --arch` for them) get none.
  if (!fused_conv_applies(limits)) return {};
  std::vector<Variant> out;
  // --math fp32: only the 3xTF32 halo design; the TF32 designs' products cannot pass the fp32
  // rule (their variants were recorded wrong_result on every preset).
  const bool split = options.strict_fp32;
  std::vector<ParamValues> halo_points;
  std::optional<KernelDesign> halo;
  if (fused_conv_halo_applies(problem)) {
    halo = fused_conv_halo_design(s, limits, problem, split);
    halo_points = halo->space.enumerate();
  }
  if (!split && gather_design_applies(problem, halo_points)) {
    const KernelDesign d = fused_conv_design(s, limits, problem);
    for (const auto& point : d.space.enumerate()) {
      const DesignPlan dp{{{"smem_bytes", fused_conv_smem_bytes(point)}, {"producers", fused_conv_producers(point)}},
                          {{"KG_PAD", fused_conv_kg_pad(s)}},
                          fused_conv_pack_launch(s, point),
                          "the filters packed for ft_fused_conv: K rounded up to bn by C*R*S rounded up to 32, "
                          "zero-padded"};
      out.push_back(fused_conv_variant(problem, s, options, d, point, dp));
    }
  }
  for (const auto& point : halo_points)
    out.push_back(fused_conv_variant(problem, s, options, *halo, point, halo_design_plan(problem.conv, s, point, split)));
  return out;
}

}  // namespace fusetune::codegen
