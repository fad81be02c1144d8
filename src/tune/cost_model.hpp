#pragma once
// A prior for the guided search (tune/guided_search.hpp): what a variant's pipeline should cost
// on this GPU before it is measured, from the GPU's figures and the variant's compiled facts.
// It only has to rank the variants of one design well enough to pick which to measure first;
// the search corrects it with what it measures.
//   - a cuDNN conv step costs what the baselines measured for its layout; before they have, its
//     FLOP at the math mode's tensor-core rate. (It counted 0 then: the compile pool's first
//     order, made before the baselines run, ranked every pipeline around cuDNN's conv ahead of
//     the fused convs, whose FLOP it did count, and on #31 spent the first 3 s of 14 threads on
//     epilogue kernels and the fused conv's N = 64 tiles; the search's picks compiled late,
//     docs/runs/2026-12-04/call95-keep-copies.tar.xz:trace-1.txt);
//   - the generated kernels move `kernel_bytes` at the copy bandwidth measured in this run,
//     slowed by low occupancy (resident warps from registers, shared memory and block size)
//     and by the last wave's idle SMs;
//   - a fused convolution (a kernel that does the conv's FLOP itself) costs at least its
//     padded GEMM's FLOP (its design's hook, codegen/design_cost.hpp) at the math mode's
//     tensor-core rate, with the same wave tail;
//   - a cuDNN graph step has no prior (all configurations of a design cost the same to it).
#include <cstdint>
#include <map>

#include "codegen/variant.hpp"
#include "gpu/device_limits.hpp"
#include "spec/problem.hpp"

namespace fusetune::tune {

struct CostInputs {
  gpu::DeviceLimits dev;
  double copy_gbps = 0;            // measured in this run; 0: a nominal 3000 GB/s
  double tensor_tflops = 495;      // the math mode's dense rate (TF32 datasheet; fp32 FMA: 51)
  std::map<int, double> conv_ms;   // by spec::Layout: the conv alone, as the baselines measured
};

// Blocks of a launch resident on one SM, from its threads, registers per thread and dynamic
// shared memory (at least 1: a launch that fits the device runs one block at a time).
[[nodiscard]] int64_t blocks_per_sm(const gpu::DeviceLimits& dev, const codegen::LaunchConfig& l, int registers);

// A convolution's FLOP at `tensor_tflops`: what no conv of this shape beats, cuDNN's included.
[[nodiscard]] double conv_floor_ms(const spec::Conv& c, double tensor_tflops);

// The prior in ms; registers < 0 when unknown (taken as 32).
[[nodiscard]] double prior_ms(const spec::Problem& problem, const codegen::Variant& v, int registers,
                              const CostInputs& in);

}  // namespace fusetune::tune
