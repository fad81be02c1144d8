#pragma once
// Runs a variant's plan in the worker: binds each buffer of its table to device memory (inputs
// to the input draw, scratch to the pool by name) and launches its steps on one stream. Knows
// nothing of candidates: a plan is buffers and steps (codegen/variant.hpp).
#include <cuda.h>

#include <optional>
#include <string>
#include <vector>

#include "codegen/cudnn_engine.hpp"
#include "codegen/variant.hpp"
#include "gpu/module.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/conv_cache.hpp"
#include "worker/graph_cache.hpp"
#include "worker/input_draws.hpp"
#include "worker/main_op_steps.hpp"

namespace fusetune::worker {

// A variant ready to run: its module loaded, one function per kernel step.
struct Loaded {
  codegen::Variant variant;
  std::optional<gpu::Module> module;
  std::vector<CUfunction> functions;  // per plan step (nullptr for cuDNN and cuBLASLt steps)
  std::optional<codegen::EngineKey> engine;  // the cuDNN graph configuration its graph steps run
};

// Loads `cubin` (may be empty when the variant has no kernels) and resolves every kernel step.
[[nodiscard]] Loaded load_variant(codegen::Variant variant, const std::string& cubin);

// Where each buffer of a plan lives for one run.
struct Binding {
  std::vector<CUdeviceptr> buffers;  // by BufferRef
  // Redirects the written output argument of one step to other memory: verification runs an
  // in-place epilogue out of place this way (tune/verifier.hpp).
  std::optional<size_t> redirect_step;
  CUdeviceptr redirect_to = 0;
};

class PlanRunner {
 public:
  PlanRunner(InputDraws& draws, BufferPool& pool, ConvAlgoCache& convs, GraphCache& graphs, MainOpSteps& main_ops,
             CUstream s)
      : draws_(draws), pool_(pool), convs_(convs), graphs_(graphs), main_ops_(main_ops), stream_(s) {}

  // Inputs of draw d; scratch from the pool under the buffer's name.
  [[nodiscard]] Binding bind(const codegen::Variant& v, int draw);
  // Enqueues step i. Throws gpu::CudaError for a refused launch, ContextLost for a sticky one.
  void run_step(const Loaded& l, size_t i, const Binding& b);
  // Every step (timed or not), in order.
  void run_all(const Loaded& l, const Binding& b);
  // The steps outside the timed region (one-time parameter transforms).
  void run_untimed(const Loaded& l, const Binding& b);
  // The cuDNN algorithm label of each conv step of the plan (cuDNN's name of the engine
  // configuration for a graph step; for a v2 plan's GEMM or N-d conv step, what ran, once it has).
  [[nodiscard]] std::vector<std::string> conv_labels(const codegen::Variant& v);

  [[nodiscard]] CUstream stream() const { return stream_; }

 private:
  InputDraws& draws_;
  BufferPool& pool_;
  ConvAlgoCache& convs_;
  GraphCache& graphs_;
  MainOpSteps& main_ops_;
  CUstream stream_;
};

}  // namespace fusetune::worker
