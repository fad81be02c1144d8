#pragma once
// A fusetune GEMM (spec::Gemm: linear or matmul, row-major, fp32 storage) run by cuBLASLt: the
// vendor main operator of the `unfused` and `floor` candidates of GEMM problems (issue 43,
// item 3; issue 45, item 1).
//
//   CublasLtHandle lt;                                  // after gpu::Context is current
//   GemmPlan plan(lt, problem.gemm, linear, MathMode::fp32);
//   std::vector<GemmAlgo> algos = plan.algorithms(16, 32 << 20);   // heuristic's order
//   plan.run(algos[0], a, b, bias, c, ws.ptr(), ws.size(), stream);
//   std::string stored = algos[0].key.text();          // later, without the heuristic:
//   std::optional<GemmAlgo> again = plan.rebuild(*parse_cublaslt_algo_key(stored), 32 << 20, &why);
//
// The row-major problem reaches cuBLASLt's column-major API by the transpose trick
// (cublaslt_layout.hpp says how and why); the linear bias is cuBLASLt's EPILOGUE_BIAS, which
// adds it in fp32 after the sum, as the reference and the TF32 rule's bias step assume.
#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/gemm_activation.hpp"
#include "common/math_mode.hpp"
#include "gpu/cublaslt_algo_key.hpp"
#include "gpu/cublaslt_descs.hpp"
#include "gpu/cublaslt_layout.hpp"
#include "spec/problem.hpp"

namespace fusetune::gpu {

// tf32 -> CUBLAS_COMPUTE_32F_FAST_TF32 (PyTorch's allow_tf32 matmul); fp32 -> CUBLAS_COMPUTE_32F
// (PyTorch's default fp32 matmul: no input down-conversion).
[[nodiscard]] cublasComputeType_t cublas_compute_type(MathMode mode);

// cuBLASLt's version as the library reports it (e.g. 130100 for 13.1.0): part of the key of any
// stored algorithm choice. Host-only: needs no GPU.
[[nodiscard]] size_t cublaslt_version();

// One algorithm for one plan: its key, cuBLASLt's opaque descriptor, the workspace it needs and
// the heuristic's estimate of how many waves of the GPU it fills.
struct GemmAlgo {
  CublasLtAlgoKey key;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace_bytes = 0;
  float waves = 0.0f;
  // "cublaslt id=...,tile=..." : the name a report or trace prints.
  [[nodiscard]] std::string name() const { return "cublaslt " + key.text(); }
};

class GemmPlan {
 public:
  // The base addresses run() is given (A, B, bias, output) must be multiples of `alignment`
  // bytes; the heuristic is told so, and picks no kernel that needs more. 256 is cuBLASLt's
  // default and what cuMemAlloc gives; pass 16 or 4 for operands at offsets inside a larger
  // buffer (fewer kernels qualify).
  // The plan keeps `handle` by reference: it must outlive the plan.
  // `activation`: applied by cuBLASLt's epilogue after the bias (RELU[_BIAS], GELU[_BIAS]).
  GemmPlan(const CublasLtHandle& handle, const spec::Gemm& gemm, bool linear, MathMode mode,
           uint32_t alignment = 256, GemmActivation activation = GemmActivation::none);

  [[nodiscard]] const spec::Gemm& gemm() const noexcept { return gemm_; }
  [[nodiscard]] bool linear() const noexcept { return linear_; }
  [[nodiscard]] MathMode mode() const noexcept { return mode_; }
  [[nodiscard]] GemmActivation activation() const noexcept { return activation_; }
  [[nodiscard]] const LtGemmLayout& layout() const noexcept { return layout_; }
  [[nodiscard]] uint32_t alignment() const noexcept { return alignment_; }

  // Up to max_count algorithms from cublasLtMatmulAlgoGetHeuristic, in its order (estimated
  // fastest first), each needing at most max_workspace_bytes. Empty when cuBLASLt has none for
  // this problem and device (CUBLAS_STATUS_NOT_SUPPORTED): a result the caller records, not an
  // error. Needs a GPU (the heuristic reads the current device).
  [[nodiscard]] std::vector<GemmAlgo> algorithms(int max_count, size_t max_workspace_bytes);

  // The algorithm `key` names, rebuilt by cublasLtMatmulAlgoInit + ConfigSetAttribute and
  // checked by cublasLtMatmulAlgoCheck for this plan on this device. nullopt, with cuBLASLt's
  // reason in *why, when it does not apply (another GPU or cuBLASLt version wrote it) or needs
  // more than max_workspace_bytes.
  [[nodiscard]] std::optional<GemmAlgo> rebuild(const CublasLtAlgoKey& key, size_t max_workspace_bytes,
                                                std::string* why = nullptr);

  // c = op(a) op(b) (+ bias), row-major, on `stream`; returns when enqueued. a: batch*M*K floats,
  // b: batch*K*N (linear's W: N*K), bias: N floats or 0 (0 exactly when the problem has no bias),
  // c: batch*M*N. The workspace must hold algo.workspace_bytes. Throws fusetune::Error for a
  // misaligned pointer, a missing or unexpected bias, a small workspace, or cuBLASLt's failure.
  // Not thread-safe: it sets the bias pointer on the plan's descriptor.
  void run(const GemmAlgo& algo, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias, CUdeviceptr c,
           CUdeviceptr workspace, size_t workspace_bytes, CUstream stream);

 private:
  [[nodiscard]] CublasLtPreference preference(size_t max_workspace_bytes) const;

  cublasLtHandle_t handle_;
  spec::Gemm gemm_;
  bool linear_;
  MathMode mode_;
  uint32_t alignment_;
  GemmActivation activation_;
  LtGemmLayout layout_;
  CublasLtMatmulDesc desc_;
  CublasLtMatrixLayout lt_a_, lt_b_, d_;
};

}  // namespace fusetune::gpu
