#include "reference/gpu_reference.hpp"

#include <algorithm>
#include <functional>
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
#include "reference/bounds.hpp"
#include "reference/main_terms_source.hpp"
#include "reference/render_double.hpp"

namespace fusetune::reference {
namespace {

// Host mirror of ft_stats in kernel_templates/ref_compare.cu.
struct DeviceStats {
  uint64_t max_abs_bits;
  uint64_t max_rel_bits;
  uint64_t worst_ratio_bits;
  double sum_err2;
  double sum_ref2;
  double sum_var;
  uint64_t mismatches;
  uint64_t nonfinite;
  uint64_t unchecked;
  uint64_t n_l2;
  uint64_t first_bad;
};
static_assert(sizeof(DeviceStats) == 88 && offsetof(DeviceStats, sum_err2) == 24 &&
              offsetof(DeviceStats, mismatches) == 48 && offsetof(DeviceStats, first_bad) == 80,
              "must match ft_stats in ref_compare.cu");

constexpr const char* kMainTermsProgram = "ref_main_any.cu";

constexpr size_t kStatsOffset = 0;
constexpr size_t kCounterOffset = 96;
constexpr size_t kScratchBytes = 128;

// cuMemAlloc hands out whole 2 MiB pages for large requests: answer_bytes counts them.
constexpr size_t kAllocGranule = size_t(2) << 20;
size_t allocated(size_t bytes) { return (bytes + kAllocGranule - 1) / kAllocGranule * kAllocGranule; }

// One RefArrays' device memory: 8-byte values, 4-byte bounds and variances. Both rules read the
// variances: the TF32 rule its bounds too, the fp32 rule its dot-product term (ref_bounds.cuh
// ft_fp32_tolerance_var).
size_t arrays_bytes(uint64_t count) {
  return allocated(size_t(count) * sizeof(double)) + 2 * allocated(size_t(count) * sizeof(float));
}

RefArrays allocate_arrays(uint64_t count) {
  RefArrays a;
  a.count = count;
  a.values = gpu::DeviceBuffer(size_t(count) * sizeof(double));
  a.bound = gpu::DeviceBuffer(size_t(count) * sizeof(float));
  a.var = gpu::DeviceBuffer(size_t(count) * sizeof(float));
  return a;
}

// ft_compare_element's use_bounds: 1 the TF32 rule, 2 the fp32 rule with the variances.
int compare_mode(MathMode math) { return math == MathMode::tf32 ? 1 : 2; }

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

RefCompiles::RefCompiles(const spec::Problem& problem, const std::string& arch, MathMode math) : arch_(arch) {
  // NVRTC is thread safe across programs; four compiles in parallel cost one's latency. Each
  // renders its own source in its task, so a rendering error is thrown by take() too.
  const auto start = [&](const char* name, std::function<std::string()> render) {
    pending_.emplace_back(name, std::async(std::launch::async, [name, render = std::move(render), arch] {
                            return compile_program(Program{name, render()}, arch);
                          }));
  };
  start("ref_fill.cu", [] { return reference_template("ref_fill.cu"); });
  // A version-2 problem's answers are its main operator's float64 terms from the GPU, then the
  // stages on the CPU (worker/model_answer.hpp): no conv or epilogue program.
  if (problem.is_conv2d_chain()) {
    start("ref_conv.cu", [problem, math] { return render_reference_conv_source(problem, math); });
    start("ref_epilogue.cu", [problem, math] { return render_reference_epilogue_source(problem, math); });
  } else {
    start(kMainTermsProgram, [problem] { return render_reference_main_source(problem); });
  }
  start("ref_compare.cu", [] { return render_reference_compare_source(); });
}

std::vector<RefCompiles::Compiled> RefCompiles::take() {
  std::vector<Compiled> out;
  for (auto& [name, f] : pending_) out.push_back({name, f.get()});  // rethrows a compile failure
  pending_.clear();
  return out;
}

GpuReference::GpuReference(const spec::Problem& problem, const std::string& arch, MathMode math)
    : GpuReference(problem, math, RefCompiles(problem, arch, math)) {}

GpuReference::GpuReference(const spec::Problem& problem, MathMode math, RefCompiles compiles)
    : problem_(problem),
      math_(math),
      flat_(!problem.is_conv2d_chain()),
      conv_launch_(flat_ ? RefConvLaunch{} : ref_conv_launch(problem, math)) {
  const int64_t pq = problem.conv.p() * problem.conv.q();
  if (!flat_ && pq > std::numeric_limits<int32_t>::max()) {
    throw InputError(fmt::format("GPU reference: {} output pixels per image exceed the compare kernel's int", pq));
  }
  std::vector<std::string> module_names;  // modules_[i]'s program
  for (RefCompiles::Compiled& p : compiles.take()) {
    programs_.push_back({p.name, p.result.compile_ms, p.result.registers, p.result.spill_stores});
    if (p.name == kMainTermsProgram) {
      main_terms_ = std::make_unique<GpuMainTerms>(problem, p.result);
      continue;
    }
    module_names.push_back(p.name);
    modules_.emplace_back(p.result.cubin.empty() ? p.result.ptx : p.result.cubin);
  }
  const auto module = [&](const std::string& name) -> gpu::Module& {
    for (size_t i = 0; i < module_names.size(); ++i)
      if (module_names[i] == name) return modules_[i];
    throw Error(ExitCode::failure, "GpuReference: program " + name + " was not compiled");
  };
  gpu::Module& fill = module("ref_fill.cu");
  fill_uniform_ = fill.function("ft_fill_uniform");
  fill_u32_ = fill.function("ft_fill_u32");
  check_u32_ = fill.function("ft_check_u32");
  spin_ = fill.function("ft_spin");
  if (!flat_) {
    conv_ = module("ref_conv.cu").function("ft_ref_conv");
    epilogue_ = module("ref_epilogue.cu").function("ft_ref_epilogue");
  }
  compare_init_ = module("ref_compare.cu").function("ft_compare_init");
  compare_ = module("ref_compare.cu").function("ft_compare");
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

void GpuReference::spin(double microseconds, CUstream stream) const {
  if (!(microseconds > 0.0)) return;
  const auto ns = static_cast<unsigned long long>(std::llround(std::min(microseconds, 1e9) * 1e3));
  gpu::launch_kernel(spin_, {1, 1, 1}, {1, 1, 1}, 0, stream, ns);
}

RefAnswer GpuReference::compute(CUdeviceptr x_nchw, CUdeviceptr w, CUdeviceptr chan, bool with_conv,
                                CUstream stream) const {
  if (flat_)
    throw Error(ExitCode::failure, "GpuReference::compute: a version-2 problem's answers come from main_terms() and "
                                   "the CPU stages (worker/model_answer.hpp)");
  const spec::Conv& c = problem_.conv;
  // The conv-alone answer: y (no bias), and the rule's E0 and V0 folded in the conv kernel.
  RefArrays conv = allocate_arrays(uint64_t(c.conv_out_elems()));
  const RefConvLaunch& l = conv_launch_;
  gpu::launch_kernel(conv_, {l.grid_x, l.grid_y, 1}, {uint32_t(l.threads), 1, 1}, 0, stream, x_nchw, w,
                     conv.values.ptr(), conv.bound.ptr(), conv.var.ptr());
  const uint64_t epilogue_items = uint64_t(c.n) * uint64_t(c.p() * c.q()) * uint64_t(problem_.reduce ? 1 : c.k);
  RefAnswer answer;
  // In place when nothing else needs the conv answer and each output element is its own conv
  // element: the answer costs one set of arrays.
  if (!problem_.reduce && !with_conv) {
    gpu::launch_kernel(epilogue_, stride_grid(epilogue_items), kStrideBlock, 0, stream, conv.values.ptr(),
                       conv.bound.ptr(), conv.var.ptr(), chan, conv.values.ptr(), conv.bound.ptr(), conv.var.ptr());
    answer.output = std::move(conv);
  } else {
    RefArrays out = allocate_arrays(uint64_t(problem_.out_elems()));
    gpu::launch_kernel(epilogue_, stride_grid(epilogue_items), kStrideBlock, 0, stream, conv.values.ptr(),
                       conv.bound.ptr(), conv.var.ptr(), chan, out.values.ptr(), out.bound.ptr(), out.var.ptr());
    answer.output = std::move(out);
    if (with_conv) answer.conv = std::move(conv);
  }
  // Before returning: the conv scratch (when not kept) is freed on the way out.
  FT_CU_CALL(gpu::driver().cuStreamSynchronize(stream));
  return answer;
}

detail::MainTerms GpuReference::main_terms(CUdeviceptr x, CUdeviceptr w, CUstream stream) const {
  if (!main_terms_)
    throw Error(ExitCode::failure, "GpuReference::main_terms: a conv2d chain problem's reference is compute()");
  return main_terms_->compute(x, w, stream);
}

GpuErrorStats GpuReference::compare(CUdeviceptr out, bool out_nhwc, const RefArrays& answer, CUstream stream) {
  return finish_compare(compare_sums(out, out_nhwc, answer, stream), answer.count, math_, answer.var_scale);
}

ft_compare_acc GpuReference::compare_sums(CUdeviceptr out, bool out_nhwc, const RefArrays& answer, CUstream stream) {
  const spec::Conv& c = problem_.conv;
  // Version 2: output and answer row-major, element by element (the layout arguments unused).
  if (flat_ && out_nhwc)
    throw Error(ExitCode::failure, "GpuReference::compare: a version-2 output is compared row-major, not NHWC");
  const uint64_t pixels = flat_ ? 1 : uint64_t(c.n) * uint64_t(c.p() * c.q());
  const uint64_t count = answer.count;
  // The output (C_out = 1 or K) or the conv-alone answer (K): the channels follow from the count.
  if (count == 0 || count % pixels != 0 || answer.values.size() < count * sizeof(double)) {
    throw Error(ExitCode::failure, fmt::format("GpuReference::compare: an answer of {} elements ({} bytes of values) "
                                               "is not N*C*P*Q of this problem",
                                               count, answer.values.size()));
  }
  if (answer.bound.size() < count * sizeof(float) || answer.var.size() < count * sizeof(float)) {
    throw Error(ExitCode::failure, "GpuReference::compare: the rule needs the answer's bounds and variances");
  }
  const CUdeviceptr stats = scratch_.ptr() + kStatsOffset;
  gpu::launch_kernel(compare_init_, {1, 1, 1}, {1, 1, 1}, 0, stream, stats);
  gpu::launch_kernel(compare_, stride_grid(count), kStrideBlock, 0, stream, out, answer.values.ptr(),
                     answer.bound.ptr(), answer.var.ptr(),
                     static_cast<unsigned long long>(count), static_cast<int>(out_nhwc ? 1 : 0),
                     static_cast<int>(flat_ ? 1 : count / pixels), static_cast<int>(flat_ ? 1 : c.p() * c.q()),
                     static_cast<int>(compare_mode(math_)),
                     stats);
  DeviceStats d{};
  scratch_.copy_to_host(&d, sizeof(d), kStatsOffset, stream);  // synchronizes the stream

  ft_compare_acc acc = ft_compare_acc_zero();
  acc.max_abs = std::bit_cast<double>(d.max_abs_bits);
  acc.max_rel = std::bit_cast<double>(d.max_rel_bits);
  acc.worst_ratio = std::bit_cast<double>(d.worst_ratio_bits);
  acc.err2 = d.sum_err2;
  acc.ref2 = d.sum_ref2;
  acc.var_sum = d.sum_var;
  acc.mismatches = d.mismatches;
  acc.nonfinite = d.nonfinite;
  acc.unchecked = d.unchecked;
  acc.n_l2 = d.n_l2;
  acc.first_bad = d.first_bad;
  return acc;
}

size_t GpuReference::answer_bytes(const spec::Problem& p, bool with_conv) {
  const size_t conv = arrays_bytes(uint64_t(p.conv.conv_out_elems()));
  if (!p.reduce && !with_conv) return conv;  // the epilogue runs in place
  // With a reduction the conv answer is scratch until the epilogue has read it (kept when
  // with_conv); without one, with_conv keeps both answers. Either way both exist at the peak.
  return conv + arrays_bytes(uint64_t(p.out_elems()));
}

}  // namespace fusetune::reference
