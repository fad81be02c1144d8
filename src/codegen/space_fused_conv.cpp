// Search space of the `fused-conv` candidate: fused_conv.cu's implicit-GEMM conv with the
// epilogue fused (designs.hpp describes the kernels).
#include <algorithm>
#include <string>

#include "codegen/designs.hpp"

namespace fusetune::codegen {

namespace {

// Below this many output pixels (4 waves of 128-pixel tiles on a 132-SM H100/H200) bm = 128
// leaves SMs idle and bm = 64 is worth a try; above it, 64-pixel tiles only re-read the
// filters more often. A fixed figure, not the device's SM count, so every sm_90 device gets
// the same space (provenance regenerates records with generic limits: trust/provenance.cpp).
constexpr int64_t kSmallConvPixels = int64_t(132) * 128 * 4;

// Registers a consumer thread needs besides its bn/2 accumulators (addresses, loop state,
// epilogue temporaries), and the most a thread can have.
constexpr int64_t kFusedConvOtherRegs = 64;
constexpr int64_t kMaxRegsPerThread = 255;


int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

}  // namespace

bool fused_conv_applies(const gpu::DeviceLimits& dev) { return dev.cc_major == 9 && dev.cc_minor == 0; }

spec::Layout fused_conv_out_layout(const spec::Problem& problem) {
  const spec::Layout want = problem.conv.out;
  // A reduced output (N, 1, P, Q) is the same memory in either layout: named as asked.
  if (problem.reduce) return want == spec::Layout::nhwc ? spec::Layout::nhwc : spec::Layout::nchw;
  // out=any takes NHWC: the accumulators hold neighbouring channels of a pixel, so NHWC
  // stores need no transpose through shared memory.
  return want == spec::Layout::nchw ? spec::Layout::nchw : spec::Layout::nhwc;
}

int64_t fused_conv_kn_pad(const Shape& s, int64_t bn) { return round_up(s.k, bn); }

int64_t fused_conv_kg_pad(const Shape& s) { return round_up(s.c * s.rs, kFusedConvBk); }

int64_t fused_conv_producers(const ParamValues& v) { return v.at("gather") == 1 ? 2 : 1; }

int64_t fused_conv_threads(const ParamValues& v) { return 128 * (v.at("bm") / 64 + fused_conv_producers(v)); }

int64_t fused_conv_smem_bytes(const ParamValues& v) {
  const int64_t bm = v.at("bm");
  const int64_t bn = v.at("bn");
  const int64_t stages = v.at("stages");
  return 1024 + stages * (bm + bn) * v.at("bk") * 4 + (bm / 64) * 32 * (64 + 4) * 4 + 16 * stages + 64;
}

LaunchConfig pack_launch(int64_t floats) {
  LaunchConfig l;
  l.grid = {uint32_t(ceil_div(floats, 256)), 1, 1};
  l.block = {256, 1, 1};
  return l;
}

LaunchConfig fused_conv_pack_launch(const Shape& s, const ParamValues& v) {
  return pack_launch(fused_conv_kn_pad(s, v.at("bn")) * fused_conv_kg_pad(s));
}

KernelDesign fused_conv_design(const Shape& s, const gpu::DeviceLimits& dev, const spec::Problem& problem) {
  KernelDesign d{"fused-conv", "fused_conv.cu", "ft_fused_conv", {}};
  ParamSpace& sp = d.space;
  const bool reduce = problem.reduce.has_value();
  const bool out_nhwc = fused_conv_out_layout(problem) == spec::Layout::nhwc;
  // bm 192 and 256 (three and four consumer warpgroups) were slower than 128 on both presets'
  // shapes (docs/perf-notes.md) and spill under their register caps; gather 0 gathers the input
  // with 4-byte cp.async and rounds it in a second pass, gather 1 through registers with two
  // producer warpgroups.
  sp.param("bm", "m", {64, 128})
      .param("bn", "n", {32, 64, 128, 256})
      // Fewer than 3 stages leaves the MMAs waiting on loads (and 2 spilled on short K loops).
      .param("stages", "s", {3, 4, 6})
      .param("gather", "g", {0, 1})
      .param("bk", "", {kFusedConvBk})
      .param("reduce", "", {reduce ? 1 : 0})
      .param("out_nhwc", "", {out_nhwc ? 1 : 0})
      .param("in_nhwc", "", {problem.conv.in == spec::Layout::nhwc ? 1 : 0});

  // Every block loops over all ceil(K / bn) channel tiles (no grid.y), with or without a
  // reduction, so any bn covers K; a tile wider than K rounded up to 32 only computes padding.
  const int64_t widest = std::max<int64_t>(32, round_up(s.k, 32));
  sp.require("bn must not exceed max(32, K rounded up to 32) (a wider tile only computes padding)",
             [=](const ParamValues& v) { return v.at("bn") <= widest; });
  const int64_t pixels = s.pixels();
  sp.require("bm = 64 only when N*P*Q < " + std::to_string(kSmallConvPixels) +
                 " (4 waves of 128-pixel tiles on 132 SMs); larger problems fill the GPU with bigger tiles",
             [=](const ParamValues& v) { return v.at("bm") != 64 || pixels < kSmallConvPixels; });
  const int64_t k_tiles = fused_conv_kg_pad(s) / kFusedConvBk;
  sp.require("gather 0 needs at least 3 k-tiles (C*R*S > 64): on shorter K loops ptxas spills its producer",
             [=](const ParamValues& v) { return v.at("gather") == 1 || k_tiles >= 3; });
  const int64_t regs = dev.regs_per_block;
  sp.require("registers: bn/2 accumulators + " + std::to_string(kFusedConvOtherRegs) +
                 " per consumer thread must fit min(255, " + std::to_string(regs) + " / threads per block)",
             [=](const ParamValues& v) {
               const int64_t per_thread = std::min(kMaxRegsPerThread, regs / fused_conv_threads(v));
               return v.at("bn") / 2 + kFusedConvOtherRegs <= per_thread;
             });
  const int64_t max_threads = dev.max_threads_per_block;
  sp.require("threads per block (128 * (bm/64 + producer warpgroups)) must not exceed the device's " + std::to_string(max_threads),
             [=](const ParamValues& v) { return fused_conv_threads(v) <= max_threads; });
  const int64_t smem = dev.smem_per_block_optin;
  sp.require("dynamic shared memory (stage ring + output staging) must fit the device's opt-in " +
                 std::to_string(smem) + " bytes per block",
             [=](const ParamValues& v) { return fused_conv_smem_bytes(v) <= smem; });
  // The worker refuses a plan whose scratch buffer is larger than every tensor of the problem
  // (codegen/variant_check.cpp), which the zero padding can make it on tiny convolutions.
  const int64_t largest = std::max({s.input_elems(), s.weight_elems(), s.conv_out_elems()});
  const Shape shape = s;
  sp.require("the packed filters (K rounded up to bn) x (C*R*S rounded up to 32) must not exceed the "
             "problem's largest tensor (" + std::to_string(largest) + " floats), the bound on scratch buffers",
             [=](const ParamValues& v) {
               return fused_conv_kn_pad(shape, v.at("bn")) * fused_conv_kg_pad(shape) <= largest;
             });

  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(ceil_div(pixels, v.at("bm"))), 1, 1};
    l.block = {uint32_t(fused_conv_threads(v)), 1, 1};
    l.smem_bytes = uint32_t(fused_conv_smem_bytes(v));
    return l;
  };
  return d;
}

}  // namespace fusetune::codegen
