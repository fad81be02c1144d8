// Search space of the `fused-gemm` candidate: fused_gemm.cu's wgmma GEMM with the chain-form
// epilogue fused (designs.hpp describes the kernels).
#include <algorithm>
#include <string>

#include "codegen/designs.hpp"
#include "codegen/gemm_epilogue.hpp"

namespace fusetune::codegen {

namespace {

// Row tiles at or above this many fill the 132 SMs of an H100/H200 without splitting the columns
// of a reduction (a fixed figure, not the device's count: every sm_90 device gets the same space).
constexpr int64_t kFillRowTiles = 132;

int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

}  // namespace

bool fused_gemm_applies(const spec::Problem& problem, const gpu::DeviceLimits& dev) {
  if (dev.cc_major != 9 || dev.cc_minor != 0) return false;  // wgmma: sm_90a only
  if (problem.main != spec::MainKind::linear && problem.main != spec::MainKind::matmul) return false;
  const spec::Gemm& g = problem.gemm;
  // One GEMM (no batch), x K-major, K a multiple of 4 for the 16-byte copies of x rows, and an
  // epilogue the kernel applies to its accumulators (gemm_epilogue.hpp).
  return g.batch == 1 && !g.trans_a && g.k % 4 == 0 && gemm_epilogue(problem).has_value();
}

bool fused_gemm_b_kn(const spec::Problem& problem) {
  return problem.main == spec::MainKind::matmul && !problem.gemm.trans_b;
}

int64_t fused_gemm_kn_pad(const spec::Gemm& g, int64_t bn) { return round_up(g.n, bn); }
int64_t fused_gemm_kg_pad(const spec::Gemm& g) { return round_up(g.k, kFusedGemmBk); }

int64_t fused_gemm_smem_bytes(const ParamValues& v) {
  const int64_t stage = kFusedGemmBm * 128 + v.at("bn") * 128 * (1 + v.at("split"));
  return 1024 + v.at("stages") * stage + 24 * v.at("stages");
}

int64_t fused_gemm_pack_floats(const spec::Gemm& g, const ParamValues& v) {
  return fused_gemm_kn_pad(g, v.at("bn")) * fused_gemm_kg_pad(g) * (1 + v.at("split"));
}

KernelDesign fused_gemm_design(const spec::Problem& problem, const gpu::DeviceLimits& dev, bool split) {
  KernelDesign d{split ? "fused-gemm3x" : "fused-gemm", "fused_gemm.cu", "ft_fused_gemm", {}};
  ParamSpace& sp = d.space;
  const spec::Gemm g = problem.gemm;
  const GemmReduce red = gemm_epilogue(problem).value().reduce;
  const bool reduce = red != GemmReduce::none;
  const int64_t row_tiles = ceil_div(g.m, kFusedGemmBm);
  sp.param("bn", "n", {64, 128, 256})
      .param("stages", "s", {3, 4, 6, 8})
      // column splits of a reduction over the features (1: one block per row tile does them all)
      .param("csplit", reduce ? "c" : "",
             reduce ? std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256} : std::vector<int64_t>{1})
      .param("bm", "", {kFusedGemmBm})
      .param("split", "", {split ? 1 : 0})
      .param("reduce", "", {reduce ? 1 : 0})
      .param("reduce_lse", "", {red == GemmReduce::logsumexp ? 1 : 0})
      .param("group_m", "", {8})
      .param("b_kn", "", {fused_gemm_b_kn(problem) ? 1 : 0});

  const int64_t widest = std::max<int64_t>(64, round_up(g.n, 64));
  sp.require("bn must not exceed max(64, N rounded up to 64) (a wider tile only computes padding)",
             [=](const ParamValues& v) { return v.at("bn") <= widest; });
  // ptxas: with bn = 256 the 3xTF32 consumer's 128 accumulators and two K tiles of big and small A
  // fragments leave it too few registers, and it serializes the wgmmas (its advisory C7512).
  sp.require("3xTF32 takes bn <= 128 (at 256 ptxas serializes the MMAs for want of registers)",
             [=](const ParamValues& v) { return v.at("split") == 0 || v.at("bn") <= 128; });
  sp.require("csplit must not exceed the column tiles (N / bn)",
             [=](const ParamValues& v) { return v.at("csplit") <= ceil_div(g.n, v.at("bn")); });
  sp.require("csplit > 1 only when the row tiles (M / 128) are fewer than " + std::to_string(kFillRowTiles) +
                 " (more already fill the SMs)",
             [=](const ParamValues& v) { return v.at("csplit") == 1 || row_tiles < kFillRowTiles; });
  // A block per SM (the stage ring takes most of shared memory): past two waves a split only
  // adds partials. M = 128 (one row tile, KernelBench's 128 x 32768 x 32768) needs 128-256 splits.
  sp.require("csplit x row tiles (M / 128) must not exceed " + std::to_string(2 * kFillRowTiles) + " blocks",
             [=](const ParamValues& v) { return v.at("csplit") * row_tiles <= 2 * kFillRowTiles; });
  // logsumexp's exp per accumulator, unrolled over 128 of them, takes NVRTC 7-8 s at bn 256 (the
  // limit is 5 s a variant); 1.8 s at 128.
  const bool lse = red == GemmReduce::logsumexp;
  sp.require("logsumexp takes bn <= 128 (at 256 its unrolled exps take NVRTC past 5 s)",
             [=](const ParamValues& v) { return !lse || v.at("bn") <= 128; });
  const int64_t smem = dev.smem_per_block_optin;
  sp.require("dynamic shared memory (the stage ring) must fit the device's opt-in " + std::to_string(smem) +
                 " bytes per block",
             [=](const ParamValues& v) { return fused_gemm_smem_bytes(v) <= smem; });
  const int64_t max_threads = dev.max_threads_per_block;
  sp.require("threads per block (384) must not exceed the device's " + std::to_string(max_threads),
             [=](const ParamValues&) { return kFusedGemmThreads <= max_threads; });

  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    if (reduce)
      l.grid = {uint32_t(row_tiles), uint32_t(v.at("csplit")), 1};
    else
      l.grid = {uint32_t(row_tiles * ceil_div(g.n, v.at("bn"))), 1, 1};
    l.block = {uint32_t(kFusedGemmThreads), 1, 1};
    l.smem_bytes = uint32_t(fused_gemm_smem_bytes(v));
    return l;
  };
  return d;
}

}  // namespace fusetune::codegen
