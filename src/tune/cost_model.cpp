#include "tune/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "codegen/design_cost.hpp"

namespace fusetune::tune {

namespace {

// Registers are allocated per warp in units of 256 (8 per thread), on every sm_70+ GPU.
constexpr int64_t kRegisterUnit = 256;
// Memory-bound kernels reach the copy bandwidth from about half occupancy; below it, fewer
// loads are in flight. A shape, not a fit: efficiency 0.4 + 1.2 x occupancy, at most 1.
constexpr double kMinMemoryEfficiency = 0.4;
constexpr double kNominalCopyGbps = 3000;

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// The wave tail: the fraction of SM time a launch keeps busy (1 for whole waves; a grid
// smaller than one wave keeps only its share of the SMs busy).
double wave_efficiency(const gpu::DeviceLimits& dev, const codegen::LaunchConfig& l, int registers) {
  const double blocks = double(l.grid[0]) * l.grid[1] * l.grid[2];
  const double per_wave = double(blocks_per_sm(dev, l, registers)) * std::max(1, dev.sm_count);
  const double waves = blocks / per_wave;
  return waves <= 0 ? 1.0 : waves / std::ceil(waves);
}

double occupancy(const gpu::DeviceLimits& dev, const codegen::LaunchConfig& l, int registers) {
  const double resident = double(blocks_per_sm(dev, l, registers)) * double(l.threads());
  return std::min(1.0, resident / std::max(1, dev.max_threads_per_sm));
}

}  // namespace

double conv_floor_ms(const spec::Conv& c, double tensor_tflops) { return c.flops() / (tensor_tflops * 1e9); }

int64_t blocks_per_sm(const gpu::DeviceLimits& dev, const codegen::LaunchConfig& l, int registers) {
  const int64_t threads = std::max<int64_t>(1, int64_t(l.threads()));
  const int64_t warps = (threads + dev.warp_size - 1) / dev.warp_size;
  const int64_t regs = std::max(registers, 1);
  const int64_t per_warp = round_up(regs * dev.warp_size, kRegisterUnit);
  int64_t n = dev.max_blocks_per_sm;
  n = std::min(n, int64_t(dev.max_threads_per_sm) / threads);
  n = std::min(n, int64_t(dev.regs_per_sm) / (per_warp * warps));
  // CUDA reserves 1 KB of shared memory per resident block.
  if (l.smem_bytes > 0) n = std::min(n, dev.smem_per_sm / (int64_t(l.smem_bytes) + 1024));
  return std::max<int64_t>(1, n);
}

double prior_ms(const spec::Problem& problem, const codegen::Variant& v, int registers, const CostInputs& in) {
  const int regs = registers > 0 ? registers : 32;
  double conv = 0;
  const codegen::KernelStep* main = nullptr;
  for (const auto& st : v.plan) {
    if (!st.timed) continue;
    switch (st.kind()) {
      case codegen::StepKind::cudnn_conv: {
        const auto it = in.conv_ms.find(int(st.conv().layout));
        conv += it != in.conv_ms.end() ? it->second : conv_floor_ms(problem.conv, in.tensor_tflops);
        break;
      }
      case codegen::StepKind::kernel: {
        const auto& k = st.kernel();
        const auto work = [](const codegen::KernelStep& s) {
          return double(s.launch.threads()) * s.launch.grid[0] * s.launch.grid[1] * s.launch.grid[2];
        };
        if (!main || work(k) > work(*main)) main = &k;
        break;
      }
      case codegen::StepKind::cudnn_graph: break;  // its cost is the design's hook's (measured, not modelled)
      // Version-2 main ops at the tensor cores' peak: a floor, as for the conv2d without a measurement.
      case codegen::StepKind::gemm: conv += st.gemm().gemm.flops() / (in.tensor_tflops * 1e9); break;
      case codegen::StepKind::conv_nd: conv += conv_floor_ms(problem.conv, in.tensor_tflops); break;
    }
  }
  if (!main) return conv;
  const double gbps = in.copy_gbps > 0 ? in.copy_gbps : kNominalCopyGbps;
  const double tail = wave_efficiency(in.dev, main->launch, regs);
  const double mem_eff = std::min(1.0, kMinMemoryEfficiency + 1.2 * occupancy(in.dev, main->launch, regs));
  double kernels = v.kernel_bytes / (gbps * 1e6) / (mem_eff * tail);
  // A design whose kernel computes the conv itself costs at least its FLOP (its hook, codegen/design_cost.hpp).
  if (const codegen::ConvFlopHook conv_flop = codegen::conv_flop_hook(v))
    kernels = std::max(kernels, conv_flop(problem.conv, v) / (in.tensor_tflops * 1e9) / tail);
  return conv + kernels;
}

}  // namespace fusetune::tune
