#include "reference/gpu_reference.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <future>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"
#include "reference/render_double.hpp"

namespace fusetune::reference {
namespace {

// Host mirror of ft_stats in kernel_templates/ref_compare.cu.
struct DeviceStats {
  uint64_t max_abs_bits;
  uint64_t max_rel_bits;
  double sum_err2;
  double sum_ref2;
  uint64_t mismatches;
  uint64_t nonfinite;
  uint64_t first_bad;
};
static_assert(sizeof(DeviceStats) == 56 && offsetof(DeviceStats, sum_err2) == 16 &&
              offsetof(DeviceStats, first_bad) == 48, "must match ft_stats in ref_compare.cu");

constexpr size_t kStatsOffset = 0;
constexpr size_t kCounterOffset = 64;
constexpr size_t kScratchBytes = 128;

// Grid-stride kernels: enough blocks to fill any current GPU several times over, few
// enough that per-block atomics (compare, check_u32) stay negligible.
constexpr uint32_t kStrideThreads = 256;  // = FT_COMPARE_THREADS, FT_REF_EPILOGUE_THREADS
constexpr uint64_t kMaxStrideBlocks = 4096;

gpu::Dim3 stride_grid(uint64_t items) {
  const uint64_t blocks = std::clamp<uint64_t>((items + kStrideThreads - 1) / kStrideThreads, 1, kMaxStrideBlocks);
  return {uint32_t(blocks), 1, 1};
}
constexpr gpu::Dim3 kStrideBlock{kStrideThreads, 1, 1};

struct Program {
  std::string name;
  std::string source;
};

gpu::CompileResult compile_program(const Program& prog, const std::string& arch) {
  gpu::CompileOptions opt;
  opt.arch = arch;
  // --fmad=false: the reference's double math must not contract a*b + c into an FMA the
  // CPU reference (op_math.cpp) does not use. The conv uses explicit fma(), unaffected.
  opt.strict_fp32 = true;
  gpu::CompileResult r = gpu::compile_cuda(prog.source, prog.name, opt);
  if (!r.ok()) {
    throw Error(ExitCode::failure,
                fmt::format("GPU reference kernel {} failed to compile for {}: {}", prog.name, arch, r.log));
  }
  return r;
}

}  // namespace

GpuReference::GpuReference(const spec::Problem& problem, const std::string& arch)
    : problem_(problem), conv_launch_(ref_conv_launch(problem)) {
  const int64_t pq = problem.conv.p() * problem.conv.q();
  if (pq > std::numeric_limits<int32_t>::max()) {
    throw InputError(fmt::format("GPU reference: {} output pixels per image exceed the compare kernel's int", pq));
  }
  const std::vector<Program> progs = {
      {"ref_fill.cu", reference_template("ref_fill.cu")},
      {"ref_conv.cu", render_reference_conv_source(problem)},
      {"ref_epilogue.cu", render_reference_epilogue_source(problem)},
      {"ref_compare.cu", reference_template("ref_compare.cu")},
  };
  // NVRTC is thread safe across programs; four compiles in parallel cost one's latency.
  std::vector<std::future<gpu::CompileResult>> pending;
  pending.reserve(progs.size());
  for (const Program& p : progs) {
    pending.push_back(std::async(std::launch::async, compile_program, std::cref(p), std::cref(arch)));
  }
  for (size_t i = 0; i < progs.size(); ++i) {
    const gpu::CompileResult r = pending[i].get();  // rethrows a compile failure
    programs_.push_back({progs[i].name, r.compile_ms, r.registers, r.spill_stores});
    modules_.emplace_back(r.cubin.empty() ? r.ptx : r.cubin);
  }
  fill_uniform_ = modules_[0].function("ft_fill_uniform");
  fill_u32_ = modules_[0].function("ft_fill_u32");
  check_u32_ = modules_[0].function("ft_check_u32");
  conv_ = modules_[1].function("ft_ref_conv");
  epilogue_ = modules_[2].function("ft_ref_epilogue");
  compare_init_ = modules_[3].function("ft_compare_init");
  compare_ = modules_[3].function("ft_compare");
  scratch_ = gpu::DeviceBuffer(kScratchBytes);
}

void GpuReference::fill_uniform(CUdeviceptr p, size_t n, uint64_t seed, float lo, float hi, CUstream stream) const {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi)) {
    throw InputError(fmt::format("fill_uniform: need finite lo < hi, got [{}, {})", lo, hi));
  }
  if (n == 0) return;
  gpu::launch_kernel(fill_uniform_, stride_grid(n), kStrideBlock, 0, stream, p, static_cast<unsigned long long>(n),
                     static_cast<unsigned long long>(seed), lo, hi);
}

void GpuReference::fill_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream) const {
  if (n == 0) return;
  gpu::launch_kernel(fill_u32_, stride_grid(n), kStrideBlock, 0, stream, p, static_cast<unsigned long long>(n),
                     static_cast<unsigned>(v));
}

uint64_t GpuReference::check_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream) {
  if (n == 0) return 0;
  const CUdeviceptr counter = scratch_.ptr() + kCounterOffset;
  FT_CU_CALL(gpu::driver().cuMemsetD8Async(counter, 0, sizeof(uint64_t), stream));
  gpu::launch_kernel(check_u32_, stride_grid(n), kStrideBlock, 0, stream, p, static_cast<unsigned long long>(n),
                     static_cast<unsigned>(v), counter);
  uint64_t bad = 0;
  scratch_.copy_to_host(&bad, sizeof(bad), kCounterOffset, stream);  // synchronizes the stream
  return bad;
}

void GpuReference::compute(CUdeviceptr x_nchw, CUdeviceptr w, CUdeviceptr chan, CUdeviceptr y64_scratch,
                           CUdeviceptr ref64_out, CUstream stream) const {
  if (problem_.reduce && ref64_out == y64_scratch) {
    throw Error(ExitCode::failure, "GpuReference::compute: with a channel reduction ref64_out must not alias "
                                   "y64_scratch");
  }
  const RefConvLaunch& l = conv_launch_;
  gpu::launch_kernel(conv_, {l.grid_x, l.grid_y, 1}, {uint32_t(l.threads), 1, 1}, 0, stream, x_nchw, w,
                     y64_scratch);
  const uint64_t epilogue_items = uint64_t(problem_.conv.n) * uint64_t(problem_.conv.p() * problem_.conv.q()) *
                                  uint64_t(problem_.reduce ? 1 : problem_.conv.k);
  gpu::launch_kernel(epilogue_, stride_grid(epilogue_items), kStrideBlock, 0, stream, y64_scratch, chan, ref64_out);
}

GpuErrorStats GpuReference::compare(CUdeviceptr out, bool out_nhwc, CUdeviceptr ref64, double atol, double rtol,
                                    CUstream stream) {
  const CUdeviceptr stats = scratch_.ptr() + kStatsOffset;
  const auto count = static_cast<unsigned long long>(problem_.out_elems());
  const auto c_out = static_cast<int>(problem_.out_channels());
  const auto pq = static_cast<int>(problem_.conv.p() * problem_.conv.q());
  gpu::launch_kernel(compare_init_, {1, 1, 1}, {1, 1, 1}, 0, stream, stats);
  gpu::launch_kernel(compare_, stride_grid(count), kStrideBlock, 0, stream, out, ref64, count,
                     static_cast<int>(out_nhwc ? 1 : 0), c_out, pq, atol, rtol, stats);
  DeviceStats d{};
  scratch_.copy_to_host(&d, sizeof(d), kStatsOffset, stream);  // synchronizes the stream

  GpuErrorStats s;
  s.max_abs = std::bit_cast<double>(d.max_abs_bits);
  s.max_rel = std::bit_cast<double>(d.max_rel_bits);
  // As reference::compare: relative to the reference's norm, absolute for an all-zero one.
  s.rel_l2 = d.sum_ref2 > 0.0 ? std::sqrt(d.sum_err2 / d.sum_ref2) : std::sqrt(d.sum_err2);
  s.mismatches = d.mismatches;
  s.nonfinite = d.nonfinite;
  s.first_bad = d.first_bad;
  return s;
}

size_t GpuReference::y64_bytes(const spec::Problem& p) { return size_t(p.conv.conv_out_elems()) * sizeof(double); }

size_t GpuReference::ref64_bytes(const spec::Problem& p) { return size_t(p.out_elems()) * sizeof(double); }

}  // namespace fusetune::reference
