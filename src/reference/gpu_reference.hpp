#pragma once
// The float64 reference on the GPU, for verifying candidates on full-size problems (the
// CPU reference is for small shapes): device-side input draws and guard patterns, the
// reference itself (direct conv in double, then the epilogue in double), and the
// comparison of a candidate's fp32 output with it, all without leaving the device.
//
// Typical use in the worker (a gpu::Context current on this thread):
//   GpuReference ref(problem, device.limits.arch_flag());
//   ref.fill_uniform(x, n_x, seed, 0.0f, 1.0f, stream);          // or upload host inputs
//   ref.compute(x, w, chan, y64.ptr(), ref64.ptr(), stream);
//   ... run the candidate into out ...
//   GpuErrorStats e = ref.compare(out, out_nhwc, ref64.ptr(), 1e-4, 1e-4, stream);
//
// Not thread-safe: one object serves one thread (its result scratch is shared by calls).
// Methods that return a result synchronize `stream`; the others only enqueue work on it.
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/module.hpp"
#include "reference/gpu_sources.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The figures of reference/compare.hpp's ErrorStats, computed on the device with the same
// match rules (see kernel_templates/ref_compare.cu).
struct GpuErrorStats {
  static constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  double max_abs = 0.0;     // max |out - ref| over elements not NaN in both (inf if one side is)
  double max_rel = 0.0;     // max |out - ref| / |ref| where |ref| >= kRelFloor (1e-6)
  double rel_l2 = 0.0;      // sqrt(sum d^2 / sum ref^2) over elements finite in both
  uint64_t mismatches = 0;  // elements failing |d| <= atol + rtol*|ref| (or NaN/inf rules)
  uint64_t nonfinite = 0;   // out NaN or inf where ref is finite: an unwritten sentinel, overflow
  uint64_t first_bad = kNone;  // NCHW index of the first mismatch, kNone if none

  [[nodiscard]] bool ok() const { return mismatches == 0; }
};

// One NVRTC compile of a reference program, for logs and the lead's timing figures.
struct RefProgramInfo {
  std::string name;  // "ref_conv.cu", ...
  double compile_ms = 0;
  int registers = -1;  // max over the program's kernels
  int spill_stores = 0;
};

class GpuReference {
 public:
  // Renders and compiles the reference programs for `arch` ("sm_90") with NVRTC, in
  // parallel, and loads them into the CURRENT context (one gpu::Context must be current on
  // this thread, now and for every call). Throws InputError for a problem the reference
  // cannot index (see ref_conv_launch), fusetune::Error with NVRTC's log if a reference
  // kernel does not compile (a bug in fusetune, not in a candidate).
  GpuReference(const spec::Problem& problem, const std::string& arch);

  // p[0, n) = seeded uniform floats in [lo, hi), never 0 (see ref_fill.cu); the same seed
  // gives the same values on any GPU and grid. Requires finite lo < hi.
  void fill_uniform(CUdeviceptr p, size_t n, uint64_t seed, float lo, float hi, CUstream stream) const;
  // p[0, n) = v, as 32-bit words: sentinels (0x7fc00000 is a NaN) and guard bands.
  void fill_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream) const;
  // How many of the words p[0, n) differ from v. Synchronizes `stream`.
  [[nodiscard]] uint64_t check_u32(CUdeviceptr p, size_t n, uint32_t v, CUstream stream);

  // The reference output, float64 NCHW, into ref64_out (ref64_bytes()). Inputs are the
  // candidate's fp32 inputs in logical order: x (N,C,H,W) -- an NHWC problem's input must
  // be given in NCHW here -- w (K,C,R,S), chan [bias K if bias][param 0 K]... (as
  // ProblemData::chan; may be 0 when empty). y64_scratch (y64_bytes()) receives the conv
  // without bias. Without a reduction ref64_out may be y64_scratch itself (the epilogue
  // works in place, saving 8*N*K*P*Q bytes); with one they must not overlap (throws when
  // they are equal). Enqueued on `stream`; nothing is synchronized.
  void compute(CUdeviceptr x_nchw, CUdeviceptr w, CUdeviceptr chan, CUdeviceptr y64_scratch,
               CUdeviceptr ref64_out, CUstream stream) const;

  // Compares a candidate's fp32 output (out_elems() floats, NCHW or NHWC) with ref64 under
  // |out - ref| <= atol + rtol*|ref|. Synchronizes `stream`.
  [[nodiscard]] GpuErrorStats compare(CUdeviceptr out, bool out_nhwc, CUdeviceptr ref64, double atol,
                                      double rtol, CUstream stream);

  [[nodiscard]] static size_t y64_bytes(const spec::Problem& p);    // 8 * N*K*P*Q
  [[nodiscard]] static size_t ref64_bytes(const spec::Problem& p);  // 8 * problem.out_elems()

  [[nodiscard]] const spec::Problem& problem() const { return problem_; }
  [[nodiscard]] const std::vector<RefProgramInfo>& programs() const { return programs_; }

 private:
  spec::Problem problem_;
  RefConvLaunch conv_launch_;
  std::vector<RefProgramInfo> programs_;
  std::vector<gpu::Module> modules_;  // own the functions below
  CUfunction fill_uniform_ = nullptr, fill_u32_ = nullptr, check_u32_ = nullptr;
  CUfunction conv_ = nullptr, epilogue_ = nullptr;
  CUfunction compare_init_ = nullptr, compare_ = nullptr;
  gpu::DeviceBuffer scratch_;  // compare's statistics and check_u32's counter
};

}  // namespace fusetune::reference
