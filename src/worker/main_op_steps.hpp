#pragma once
// The vendor main operator of version-2 plans: codegen::GemmStep through cuBLASLt
// (gpu::GemmPlan) and codegen::ConvNdStep through a cuDNN graph (worker::ConvNdGraph). Each is
// built once per worker, on its first run, and kept: every variant of a problem runs the same
// main operator (the problem's GEMM or conv; the checker holds a step's to the problem's), so
// a plan per distinct step (linear or not and the bias; the conv kind, layout and bias) serves
// the unfused and floor candidates alike, and a chain (v1) session never creates any of it.
//
// Which implementation runs: cuBLASLt's heuristic's algorithm of the step's rank (0, its first
// choice, unless a cublaslt-fused variant asks for another), with the step's activation; cuDNN's first engine
// configuration, in the heuristics' order, whose plan builds; for a channels-first conv where
// cuDNN refuses the bias in the graph (every transposed conv), its conv alone and fusetune's bias
// kernel after it; where it builds nothing even so, fusetune's own fp32 conv
// (worker/conv_nd_direct.hpp). A conv step has no field to choose another configuration yet.
#include <cuda.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "codegen/variant.hpp"
#include "common/math_mode.hpp"
#include "gpu/cublaslt.hpp"
#include "gpu/cudnn_handle.hpp"
#include "spec/problem.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/conv_nd_direct.hpp"
#include "worker/conv_nd_graph.hpp"

namespace fusetune::worker {

class MainOpSteps {
 public:
  // arch: the device's sm_XX, for the fallback conv's compile.
  MainOpSteps(gpu::CudnnHandle& cudnn, const spec::Problem& problem, MathMode math, BufferPool& pool, CUstream s,
              std::string arch);
  ~MainOpSteps();
  MainOpSteps(const MainOpSteps&) = delete;
  MainOpSteps& operator=(const MainOpSteps&) = delete;

  // Enqueue the step on the stream with its buffers' pointers (bias 0 when the step has none).
  // Throw fusetune::Error when cuBLASLt has no algorithm for the GEMM, or fewer than the step's
  // rank asks for (a variant failure the tune records); GraphRefused when cuDNN
  // refuses a channels-last conv or builds none of its configurations (channels-first: the
  // fallback conv runs).
  void gemm(const codegen::GemmStep& step, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias, CUdeviceptr out);
  void conv_nd(const codegen::ConvNdStep& step, const ConvNdBuffers& buffers);

  // What ran for the step ("cublaslt id=...", "cuDNN graph eng...", "cuDNN graph eng... + fusetune
  // bias add (...)", "fusetune direct conv (...)"), once it has run; nullopt before.
  [[nodiscard]] std::optional<std::string> label(const codegen::GemmStep& step) const;
  [[nodiscard]] std::optional<std::string> label(const codegen::ConvNdStep& step) const;

  // The maximum cuBLASLt workspace an algorithm may ask for (cuBLASLt's own examples use 32 MiB).
  static constexpr size_t kMaxGemmWorkspace = size_t(32) << 20;

 private:
  struct Gemm;
  struct Conv;
  using GemmKey = std::tuple<bool, bool, GemmActivation, int>;     // linear, bias, activation, algo
  using ConvKey = std::tuple<spec::MainKind, spec::Layout, bool>;  // kind, layout, bias
  Gemm& gemm_plan(const codegen::GemmStep& step);
  Conv& conv_graph(const codegen::ConvNdStep& step);
  std::unique_ptr<Conv> cudnn_conv(const codegen::ConvNdStep& step, bool bias);

  gpu::CudnnHandle& cudnn_;
  spec::Problem problem_;
  MathMode math_;
  BufferPool& pool_;
  CUstream stream_;
  std::string arch_;
  std::optional<gpu::CublasLtHandle> lt_;  // created on the first GEMM: before any plan, which keeps it by reference
  std::map<GemmKey, std::unique_ptr<Gemm>> gemms_;
  std::map<ConvKey, std::unique_ptr<Conv>> convs_;
};

}  // namespace fusetune::worker
