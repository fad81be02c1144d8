#pragma once
// The float64 reference on the GPU, for verifying candidates on full-size problems (the
// CPU reference is for small shapes): device-side input draws and guard patterns, the
// reference itself (direct conv in double, then the epilogue in double), the error bound of
// the math mode's rule, and the comparison of a candidate's fp32 output with it, all without
// leaving the device.
//
// Typical use in the worker (a gpu::Context current on this thread):
//   GpuReference ref(problem, device.limits.arch_flag(), MathMode::tf32);
//   ref.fill_uniform(x, n_x, seed, 0.0f, 1.0f, stream);          // or upload host inputs
//   RefAnswer answer = ref.compute(x, w, chan, /*with_conv=*/true, stream);
//   ... run the candidate into out ...
//   GpuErrorStats e = ref.compare(out, out_nhwc, answer.output, stream);
//   Verdict v = judge(e, MathMode::tf32);                          // reference/tolerance.hpp
//
// For a version-2 problem (any that is not a conv2d chain) the fills, guards, spin, the
// comparison and the main operator's float64 terms (main_terms(), ref_main_any.cu) are compiled:
// its answers are those terms with the stages run on the CPU (worker/model_answer.hpp), and
// compare() takes the output and the answer as row-major arrays of the same count; compute()
// throws.
//
// Not thread-safe: one object serves one thread (its result scratch is shared by calls).
// Methods that return a result synchronize `stream`; the others only enqueue work on it.
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "gpu/compiler.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/module.hpp"
#include "kernel_templates/ref_bounds.cuh"
#include "reference/gpu_main_terms.hpp"
#include "reference/gpu_sources.hpp"
#include "reference/model_main.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The figures of one comparison, computed on the device (kernel_templates/ref_compare.cu)
// with the match rules of reference/compare.hpp, under the math mode's tolerance:
//   fp32: element i passes when |out - ref| <= 1e-4 + 1e-4*|ref| + 6 sqrt(var_i) (var_i: a
//         correct fp32 computation's error variance, its dot product's rounding; none where
//         var_i is infinite);
//   tf32: element i passes when |out - ref| <= bound_i (the TF32 rule's per-element bound;
//         an infinite bound marks an ill-conditioned element, counted in `unchecked` and
//         never a mismatch, even when out is NaN there).
struct GpuErrorStats {
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  double max_abs = 0.0;     // max |out - ref| over elements not NaN in both (inf if one side is)
  double max_rel = 0.0;     // max |out - ref| / |ref| where |ref| >= kRelFloor (1e-6)
  double rel_l2 = 0.0;      // sqrt(sum d^2 / sum ref^2) over elements finite in both
  double rel_l2_limit = 0;  // tf32: the rule's limit on rel_l2 for this draw; 0 under fp32
  double worst_ratio = 0;   // max |out - ref| / tolerance_i over checked elements (> 1 fails)
  uint64_t mismatches = 0;  // elements failing their tolerance (or the NaN/inf rules)
  uint64_t nonfinite = 0;   // out NaN or inf where ref is finite (and checked): unwritten, overflow
  uint64_t unchecked = 0;   // tf32: elements whose bound is infinite (ill-conditioned)
  uint64_t count = 0;       // elements compared
  uint64_t first_bad = kNone;  // NCHW index of the first mismatch, kNone if none

  [[nodiscard]] bool ok() const { return mismatches == 0; }
};

// One reference result in device memory: the float64 values, NCHW, and the per-element bound
// and variance of the math mode's rule (docs/verification.md).
struct RefArrays {
  gpu::DeviceBuffer values;  // `count` doubles, NCHW
  gpu::DeviceBuffer bound;   // `count` floats, |out - ref| a TF32 result may have (inf: unchecked); tf32 reads it
  gpu::DeviceBuffer var;     // `count` floats, expected squared error of a correct result under the math mode
  uint64_t count = 0;
  // tf32: kappa of reference/l2_model.hpp, the drawn inputs' rounding variance over the model's
  // (set by whoever drew the inputs, worker/input_draws.cpp); 1 leaves the model as is
  double var_scale = 1.0;
};

// What compute() returns for one input draw.
struct RefAnswer {
  RefArrays output;               // the problem's output: (N, K, P, Q) or (N, 1, P, Q)
  std::optional<RefArrays> conv;  // the conv alone, without bias (N, K, P, Q), when asked for
};

// One NVRTC compile of a reference program, for logs and the lead's timing figures.
struct RefProgramInfo {
  std::string name;  // "ref_conv.cu", ...
  double compile_ms = 0;
  int registers = -1;  // max over the program's kernels
  int spill_stores = 0;
};

// The reference programs rendered and compiled for `arch` with NVRTC, which needs no context:
// a worker starts them before it creates its context and cuDNN handle (0.15-0.3 s on the H200),
// so the two overlap, and GpuReference loads them once the context is current. A rendering or
// compile error is thrown by take(), where the constructor of GpuReference throws it.
class RefCompiles {
 public:
  RefCompiles(const spec::Problem& problem, const std::string& arch, MathMode math);
  struct Compiled {
    std::string name;
    gpu::CompileResult result;
  };
  // Waits for all of them (four for a conv2d chain, three for a version-2 problem); once only.
  std::vector<Compiled> take();

 private:
  std::string arch_;
  std::vector<std::pair<std::string, std::future<gpu::CompileResult>>> pending_;
};

class GpuReference {
 public:
  // Renders and compiles the reference programs for `arch` ("sm_90") with NVRTC, in
  // parallel, and loads them into the CURRENT context (one gpu::Context must be current on
  // this thread, now and for every call). `math` selects the tolerance rule and the main
  // operator's variance (both compute the bound arrays). Throws InputError for a problem the reference cannot index
  // (see ref_conv_launch), fusetune::Error with NVRTC's log if a reference kernel does not
  // compile (a bug in fusetune, not in a candidate).
  GpuReference(const spec::Problem& problem, const std::string& arch, MathMode math);
  // The same with the programs compiled already (or under way): RefCompiles for this problem.
  GpuReference(const spec::Problem& problem, MathMode math, RefCompiles compiles);

  // p[0, n) = seeded uniform floats in [lo, hi), never 0 (see ref_fill.cu); the same seed
  // gives the same values on any GPU and grid. Requires finite lo < hi.
  void fill_uniform(CUdeviceptr p, size_t n, uint64_t seed, float lo, float hi, CUstream stream) const;
  // p[0, n) = v, as 32-bit words: sentinels (0x7fc00000 is a NaN) and guard bands.
  void fill_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream) const;
  // How many of the words p[0, n) differ from v. Synchronizes `stream`.
  [[nodiscard]] uint64_t check_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream);
  // Spins on the device for about `microseconds` (globaltimer): put in front of a timed region
  // so the host has enqueued the whole region before the GPU reaches its first event.
  void spin(double microseconds, CUstream stream) const;

  // The reference for inputs x (N,C,H,W, logical order even for an NHWC problem), w (K,C,R,S),
  // chan [bias K if bias][param 0 K]... (may be 0 when empty). with_conv: also the conv-alone
  // answer (the `cudnn` candidate's and cuDNN algorithm selection's reference), without running
  // the double convolution twice. Allocates the answer's memory; synchronizes `stream`.
  [[nodiscard]] RefAnswer compute(CUdeviceptr x_nchw, CUdeviceptr w, CUdeviceptr chan, bool with_conv,
                                  CUstream stream) const;

  // Version 2: the main operator's float64 terms for inputs in device memory (x: its input,
  // w: its weight, as reference::ModelData orders them), for model_reference_with_terms. Throws
  // InputError when not even one chunk of them fits the free device memory; synchronizes `stream`.
  [[nodiscard]] detail::MainTerms main_terms(CUdeviceptr x, CUdeviceptr w, CUstream stream) const;

  // Compares a candidate's fp32 output (answer.count floats, NCHW or NHWC) with `answer` under
  // the math mode's tolerance. For the conv-alone answer pass its RefArrays (its channels are
  // K). Synchronizes `stream`.
  [[nodiscard]] GpuErrorStats compare(CUdeviceptr out, bool out_nhwc, const RefArrays& answer, CUstream stream);
  // The same comparison's raw sums and maxima, before finish_compare turns them into figures:
  // what verification sliced by images (image_slices.hpp) merges over the slices.
  // compare() is finish_compare(compare_sums(...), answer.count, math(), answer.var_scale).
  [[nodiscard]] ft_compare_acc compare_sums(CUdeviceptr out, bool out_nhwc, const RefArrays& answer, CUstream stream);

  // Device memory compute() allocates for one draw (answer and scratch at their peak), for the
  // worker's "does the problem fit" check: the same under both rules (both read the variances).
  [[nodiscard]] static size_t answer_bytes(const spec::Problem& p, bool with_conv);

  [[nodiscard]] const spec::Problem& problem() const { return problem_; }
  [[nodiscard]] MathMode math() const { return math_; }
  [[nodiscard]] const std::vector<RefProgramInfo>& programs() const { return programs_; }

 private:
  spec::Problem problem_;
  MathMode math_;
  bool flat_ = false;  // a version-2 problem: no conv or epilogue program, row-major comparisons
  RefConvLaunch conv_launch_;
  std::vector<RefProgramInfo> programs_;
  std::vector<gpu::Module> modules_;  // own the functions below
  CUfunction fill_uniform_ = nullptr, fill_u32_ = nullptr, check_u32_ = nullptr, spin_ = nullptr;
  CUfunction conv_ = nullptr, epilogue_ = nullptr;
  CUfunction compare_init_ = nullptr, compare_ = nullptr;
  gpu::DeviceBuffer scratch_;  // compare's statistics and check_u32's counter
  std::unique_ptr<GpuMainTerms> main_terms_;  // version 2 only
};

}  // namespace fusetune::reference
