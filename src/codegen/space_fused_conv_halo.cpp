// Search space of the `fused-conv` candidate's halo design: fused_conv_halo.cu (designs.hpp
// describes the kernels). The shared-memory sums here mirror the template's macros one for one.
#include <algorithm>
#include <limits>
#include <string>

#include "codegen/designs.hpp"

namespace fusetune::codegen {

namespace {

constexpr int64_t kTilePixels = 128;     // FT_TP * FT_TQ: two consumer warpgroups of 64 pixels
constexpr int64_t kHaloThreads = 384;    // FT_THREADS: one producer and two consumer warpgroups,
                                         // plus 128 per epilogue warpgroup (FT_EPI_WG)
constexpr int64_t kEpiPitch = 68;        // FT_EPI_PITCH
constexpr int64_t kEpiNhwcPitch = 40;    // FT_EPI_NHWC_PITCH: e0's pixel-major tile for NHWC output

// A tile whose halo window reads more than this many input values per output pixel and chunk
// channel (halo area / 128) is pruned, unless no tile does better: the halo is loaded through
// shared memory once per chunk, so its area is the producer's traffic and the shared memory a
// stage ring cannot have. On the presets' 3x3 convs a 1 x 128 tile reads 3.2 values per pixel
// and measured slowest of the four tile shapes (docs/perf-notes.md, v6).
constexpr double kMaxHaloAmplification = 2.5;

int64_t vector_width(const Shape& s) { return s.w % 4 == 0 ? 4 : s.w % 2 == 0 ? 2 : 1; }

int64_t halo_rows(const spec::Conv& c, int64_t tp) { return (tp - 1) * c.stride_h + (c.r - 1) * c.dil_h + 1; }

// FT_HCP: floats per halo row, the window widened to whole aligned vectors.
int64_t halo_row_floats(const spec::Conv& c, const Shape& s, int64_t tq) {
  const int64_t used = (tq - 1) * c.stride_w + (c.s - 1) * c.dil_w + 1;
  const int64_t vw = vector_width(s);
  return (used + 2 * (vw - 1)) / vw * vw;
}

// FT_CHS: floats per halo channel, padded to 8 mod 32; the halo holds cp channels (FT_CC).
int64_t halo_channel_floats(const spec::Conv& c, const Shape& s, int64_t tp, int64_t tq) {
  return (halo_rows(c, tp) * halo_row_floats(c, s, tq) + 23) / 32 * 32 + 8;
}

// Ops of the per-element chain rendered with a special function (ex2, rcp, erf, lg2: ft_math.cuh):
// the chains for which a second epilogue warpgroup is offered.
int special_function_ops(const spec::Problem& problem) {
  int n = 0;
  for (const spec::Op& op : problem.pre) {
    switch (op.kind) {
      case spec::OpKind::gelu:
      case spec::OpKind::gelu_tanh:
      case spec::OpKind::tanh:
      case spec::OpKind::sigmoid:
      case spec::OpKind::silu:
      case spec::OpKind::mish:
      case spec::OpKind::softplus:
      case spec::OpKind::exp:
      case spec::OpKind::log:
        ++n;
        break;
      default:
        break;
    }
  }
  return n;
}

// Registers per thread a block of `threads` starts with under __launch_bounds__(threads, 1), out
// of `regs` per block (in units of 8): setmaxnreg moves registers within threads times this.
int64_t launch_registers(int64_t regs, int64_t threads) { return regs / threads / 8 * 8; }

double halo_amplification(const spec::Conv& c, const Shape& s, int64_t tp) {
  return double(halo_rows(c, tp) * halo_row_floats(c, s, kTilePixels / tp)) / double(kTilePixels);
}

}  // namespace

bool fused_conv_halo_applies(const spec::Problem& problem) { return problem.conv.in == spec::Layout::nchw; }

int64_t halo_conv_cp(const ParamValues& point) {
  for (const auto& [name, value] : point.items)
    if (name == "cp") return value;
  return 32;
}

int64_t halo_conv_tiles(const Shape& s, const ParamValues& v) {
  const int64_t tp = v.at("tp");
  return s.n * ceil_div(s.p, tp) * ceil_div(s.q, kTilePixels / tp);
}

int64_t halo_conv_smem_bytes(const spec::Conv& c, const Shape& s, const ParamValues& v) {
  const int64_t tp = v.at("tp");
  const int64_t stages = v.at("stages");
  const int64_t halo = halo_conv_cp(v) * halo_channel_floats(c, s, tp, kTilePixels / tp) * 4;
  const int64_t epi_wg = v.at("epi_wg");
  const int64_t epi = epi_wg            ? 2 * v.at("bn") * kEpiPitch * 4
                      : v.at("reduce")    ? 0
                      : v.at("out_nhwc") ? 2 * 64 * kEpiNhwcPitch * 4
                                          : 2 * 32 * kEpiPitch * 4;
  const int64_t chan = (s.chan_floats() * 4 + 15) / 16 * 16;
  // FT_EPI_RED_BYTES: two epilogue warpgroups' partial reductions
  const int64_t red = epi_wg == 2 && v.at("reduce") ? 2 * 64 * 4 : 0;
  return 1024 + stages * v.at("bn") * 128 * (1 + v.at("split")) + 2 * halo + epi + chan + red + 16 * (stages + 2) +
         32 * (epi_wg ? 1 : 0) + 64;
}

LaunchConfig halo_conv_pack_launch(const Shape& s, const ParamValues& v) {
  return pack_launch(fused_conv_kn_pad(s, v.at("bn")) * halo_conv_kg_pad(s.c, s.rs, halo_conv_cp(v)) * (1 + v.at("split")));
}

KernelDesign fused_conv_halo_design(const Shape& s, const gpu::DeviceLimits& dev, const spec::Problem& problem,
                                    bool split) {
  KernelDesign d{split ? "fused-conv.halo3x" : "fused-conv.halo", "fused_conv_halo.cu", "ft_fused_conv", {}};
  ParamSpace& sp = d.space;
  const spec::Conv& conv = problem.conv;
  const bool reduce = problem.reduce.has_value();
  const bool out_nhwc = fused_conv_out_layout(problem) == spec::Layout::nhwc;
  const int64_t min_cp = halo_conv_min_cp(s.c);
  const bool small_c = min_cp < 32;
  // tp output rows x 128/tp columns per tile; bn a wgmma N; stages of the filter ring (the halo
  // has two buffers of its own). The v6 prototype measured 4 x 32, bn 128 and 8-9 stages best
  // on both presets' shapes, 6 stages within 2% (docs/perf-notes.md).
  sp.param("tp", "p", {1, 2, 4, 8})
      .param("bn", "n", {32, 64, 128, 256})
      .param("stages", "s", {4, 5, 6, 8})
      // e1: a fourth warpgroup runs the epilogue while the consumers go on with the next tile
      // (its buffers cost 2 x bn x 272 bytes of shared memory: fewer stages fit); e2: two, one
      // per consumer, for chains of costly ops; e0: the consumers run it themselves between
      // tiles (more stages, more registers per consumer).
      .param("epi_wg", "e", {0, 1, 2})
      .param("reduce", "", {reduce ? 1 : 0})
      .param("out_nhwc", "", {out_nhwc ? 1 : 0})
      .param("split", "", {split ? 1 : 0});
  // c4/c8/c16: below 17 input channels a 32-wide K tile holds 32/cp taps of cp channels (C = 8
  // pads 72 to 96 instead of to 288: a third of the MMAs, and a halo of 8 channel planes instead
  // of 32); c32, one tap per K tile as for wide inputs, stays offered beside it. Past 16 channels
  // there is no cp parameter (the template's default, 32) unless no point fits without (below):
  // those variants' sources, and so the shipped records' provenance, are what they were before it.
  if (small_c) sp.param("cp", "c", {min_cp, 32});
  // 3xTF32 keeps a small part of every A fragment beside it (32 more registers per consumer
  // thread): with 128 accumulators (bn 256) that leaves ptxas too few of the 224.
  sp.require("3xTF32: bn must not exceed 128 (the small parts of the A fragments take 32 registers)",
             [](const ParamValues& v) { return v.at("split") == 0 || v.at("bn") <= 128; });

  // bn: a column tile up to K rounded up to a power of two (K = 76 may take one 128-wide tile,
  // padding included, instead of two 64-wide ones), and at most twice the fewest column tiles:
  // every column tile re-loads the halo and re-runs every tap.
  int64_t widest = 32;
  while (widest < s.k && widest < 256) widest *= 2;
  const int64_t fewest_tiles = ceil_div(s.k, 256);
  sp.require("bn must not exceed K rounded up to a power of two (a wider tile only computes padding)",
             [=](const ParamValues& v) { return v.at("bn") <= widest; });
  sp.require("at most twice the fewest column tiles (ceil(K/bn) <= 2 ceil(K/256)): every column tile "
             "re-loads the halo and re-runs the taps",
             [=](const ParamValues& v) { return ceil_div(s.k, v.at("bn")) <= 2 * fewest_tiles; });
  // A tile wider than the output row only computes padding: its columns past Q are wasted.
  const int64_t q_cover = std::max<int64_t>(16, ceil_div(s.q, 16) * 16);
  double best_amp = std::numeric_limits<double>::infinity();
  for (int64_t tp : {1, 2, 4, 8})
    if (kTilePixels / tp <= q_cover) best_amp = std::min(best_amp, halo_amplification(conv, s, tp));
  const double amp_limit = std::max(kMaxHaloAmplification, best_amp);
  sp.require("the tile's columns (128/tp) must not exceed max(16, Q rounded up to 16)",
             [=](const ParamValues& v) { return kTilePixels / v.at("tp") <= q_cover; });
  sp.require("the halo window must read at most 2.5 input values per output pixel (halo area / 128), "
             "unless no tile shape does better",
             [=](const ParamValues& v) { return halo_amplification(conv, s, v.at("tp")) <= amp_limit + 1e-9; });
  // The halo copies address a chunk with 32-bit offsets that step up to 3 planes past its cp
  // channel planes after the last copy: cp + 3 planes must fit in them.
  sp.require("a chunk's channel planes and 3 more ((cp+3)*H*W) must fit 32-bit offsets",
             [=](const ParamValues& v) { return (halo_conv_cp(v) + 3) * s.hw < (int64_t(1) << 31); });
  const Shape shape = s;
  const spec::Conv geometry = conv;
  const int64_t smem = dev.smem_per_block_optin;
  sp.require("dynamic shared memory (filter stages + two halo buffers + output staging + channel vectors) "
             "must fit the device's opt-in " + std::to_string(smem) + " bytes per block",
             [=](const ParamValues& v) { return halo_conv_smem_bytes(geometry, shape, v) <= smem; });
  // 5 stages is for the epilogue warpgroup's bn = 128 tiles, whose buffers leave room for 5
  // but not 6 next to a 4 x 32 tile's halo; elsewhere 4/6/8 cover the range.
  sp.require("5 stages only where 6 do not fit in shared memory", [=](const ParamValues& v) {
    if (v.at("stages") != 5) return true;
    ParamValues six = v;
    for (auto& [name, value] : six.items)
      if (name == "stages") value = 6;
    return halo_conv_smem_bytes(geometry, shape, six) > smem;
  });
  const int64_t max_threads = dev.max_threads_per_block;
  sp.require("threads per block (384, plus 128 per epilogue warpgroup) must not exceed the device's " +
                 std::to_string(max_threads),
             [=](const ParamValues& v) { return kHaloThreads + 128 * v.at("epi_wg") <= max_threads; });
  const int64_t regs = dev.regs_per_block;
  sp.require("registers: the warpgroups must fit the device's " + std::to_string(regs) +
                 " per block (setmaxnreg: 56 to producers; 224 to consumers; with one epilogue warpgroup 184 "
                 "to consumers and 88 to it; with two 160 and 48 each)",
             [=](const ParamValues& v) {
               const int64_t e = v.at("epi_wg");
               const int64_t consumer = e == 2 ? 160 : e == 1 ? 184 : 224, epilogue = e == 2 ? 48 : e == 1 ? 88 : 0;
               const int64_t threads = kHaloThreads + 128 * e;
               return 128 * 56 + 256 * consumer + 128 * e * epilogue <= threads * launch_registers(regs, threads);
             });
  // A second epilogue warpgroup pays off only for costly chains: on #31's shape `gelu | softplus`
  // took 1.79 ms instead of 2.15, `mish | mish` 1.42 instead of 1.45, `x 2` 1.20 instead of 1.22
  // (docs/runs/2026-12-02/call49-epi2.tar.xz:harness.txt); cheap chains keep the space small.
  const int costly_ops = special_function_ops(problem);
  sp.require("two epilogue warpgroups (e2) only for a chain of two or more ops rendered with special "
             "functions (exp, erf, log, ...)",
             [=](const ParamValues& v) { return v.at("epi_wg") != 2 || costly_ops >= 2; });
  const int64_t largest = std::max({s.input_elems(), s.weight_elems(), s.conv_out_elems()});
  sp.require("the packed filters (K rounded up to bn) x (C rounded up to cp, times R*S rounded up to 32/cp) "
             "must not exceed the problem's largest tensor (" + std::to_string(largest) +
                 " floats), the bound on scratch buffers",
             [=](const ParamValues& v) {
               return fused_conv_kn_pad(shape, v.at("bn")) * halo_conv_kg_pad(shape.c, shape.rs, halo_conv_cp(v)) *
                          (1 + v.at("split")) <=
                      largest;
             });

  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(std::min(halo_conv_tiles(shape, v), kPersistentBlocks)), 1, 1};
    l.block = {uint32_t(kHaloThreads + 128 * v.at("epi_wg")), 1, 1};
    l.smem_bytes = uint32_t(halo_conv_smem_bytes(geometry, shape, v));
    return l;
  };
  // Past 16 channels, where no tile's halo of 32 channel planes fits beside its filter stages
  // (ResNet-50's stride-2 3 x 3 convs of 256 and 512 channels, ConvNeXt's 2 x 2 downsamplers),
  // chunks of 16 channels, two taps per K tile (c16): half the halo, 11% more MMAs on a 3 x 3
  // (5 K tiles for its 9 taps). Only there, so every other problem's variants stay as they were.
  if (!small_c && sp.enumerate().empty()) {
    sp.param("cp", "c", {16});
    // (ptxas spilled 12 bytes in the 160-register consumers of p8.n64.e2 there, 2026-12-07)
    sp.require("3xTF32 on chunks of 16 channels past 16 input channels: one epilogue warpgroup at most",
               [](const ParamValues& v) { return v.at("split") == 0 || v.at("epi_wg") < 2; });
  }
  return d;
}

}  // namespace fusetune::codegen
