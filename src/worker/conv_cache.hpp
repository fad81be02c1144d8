#pragma once
// cuDNN's convolution for each layout a plan asks for, chosen once per worker from both of
// cuDNN's interfaces: the legacy algorithms (cudnnFindConvolutionForwardAlgorithmEx ranks them)
// and every engine configuration the graph API offers for the conv alone (heuristics A, B and
// the fallback list; gpu/cudnn_graph.hpp). They are timed here, interleaved, and the fastest
// that passes the math mode's verification rule on the first input draw (the rule every
// candidate is held to: a conv whose result would fail it cannot stand under a baseline or a
// design) feeds every plan. A worker started after a fault takes the choices of the one
// before instead of searching again.
#include <cuda.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/math_mode.hpp"
#include "gpu/cudnn_conv.hpp"
#include "gpu/cudnn_handle.hpp"
#include "gpu/device_buffer.hpp"
#include "spec/problem.hpp"
#include "worker/buffer_pool.hpp"
#include "worker/graph_cache.hpp"
#include "worker/input_draws.hpp"
#include "worker/reference_check.hpp"
#include "protocol/protocol.hpp"

namespace fusetune::worker {

class ConvAlgoCache {
 public:
  // l2_scrub_bytes: scrubbed before each timing of a candidate (0: the working set exceeds the L2).
  ConvAlgoCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, InputDraws& draws,
                BufferPool& pool, ReferenceCheck& check, GraphCache& graphs, CUstream s, size_t l2_scrub_bytes);

  // Choices made earlier (by a worker that was replaced, or stored with a winner): used as they are.
  void seed(const protocol::ConvChoices& choices) { choices_ = choices; }
  // Another worker's choices, for the layouts this one has not chosen (the tuner's other GPUs).
  void adopt(const protocol::ConvChoices& choices) { choices_.insert(choices.begin(), choices.end()); }
  // Only the first `n` graph configurations in cuDNN's heuristics order are built and timed
  // (0: all). Each cold build is a runtime compile: all 42 of kernelbench-31's conv took 0.8-1.1 s
  // a layout, one after another (cudnn-frontend 1.32 has no parallel build), and the fastest was
  // among the first three in all 16 choices of calls 52-53 (four problems, both layouts).
  void set_graph_head(size_t n) { graph_head_ = n; }

  // y = conv(x, w) (+ bias[k] when bias_or_0 != 0) in `layout` with the chosen algorithm or
  // engine configuration, choosing on first use; asynchronous. Throws Error when none passes.
  void forward(spec::Layout layout, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr bias_or_0);
  // "IMPLICIT_PRECOMP_GEMM (tf32)", "graph eng0_k2=1 (tf32)": the choice for `layout`.
  [[nodiscard]] std::string label(spec::Layout layout);

  [[nodiscard]] const protocol::ConvChoices& choices() const { return choices_; }
  // Choices cuDNN ranked or offered that failed verification, one line each.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

 private:
  static constexpr size_t kTimedLegacy = 4;  // legacy algorithms timed, at most
  static constexpr size_t kTimedGraph = 64;  // graph engine configurations timed, at most
  static constexpr double kScreenFactor = 1.5;  // kept after the screening round: within this of its best
  static constexpr int kRounds = 8;             // interleaved rounds of the kept options

  // One way to run the conv: a legacy algorithm or a graph engine configuration.
  struct Option {
    protocol::ConvChoice choice;
    std::function<void(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y)> run;
  };
  struct Chosen {
    std::unique_ptr<gpu::CudnnConv> legacy;  // always made: it adds the bias for either kind
    protocol::ConvChoice choice;
  };

  Chosen& ensure(spec::Layout layout);
  std::vector<Option> legacy_options(gpu::CudnnConv& conv, bool nhwc, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y);
  std::vector<Option> graph_options(spec::Layout layout);
  // Whether running `o` on draw 0 passes the math mode's rule; a note says why not.
  bool passes(const Option& o, bool nhwc, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y);
  // The fastest option that passes verification (nullptr: none runs and passes).
  const Option* fastest(const std::vector<Option>& options, bool nhwc, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y);
  void choose_legacy(Chosen& c);
  void run_graph(spec::Layout layout, const protocol::ConvChoice& choice, CUdeviceptr x, CUdeviceptr w, CUdeviceptr y);

  gpu::CudnnHandle& handle_;
  spec::Problem problem_;
  MathMode math_;
  InputDraws& draws_;
  BufferPool& pool_;
  ReferenceCheck& check_;
  GraphCache& graphs_;
  CUstream stream_;
  size_t graph_head_ = 0;
  size_t legacy_count_ = 0;    // of the options being chosen from, the legacy algorithms (first)
  double graph_build_s_ = 0;   // listing and building the graph's plans, for the choice's note
  size_t l2_scrub_bytes_;
  std::map<int, Chosen> chosen_;  // by layout
  protocol::ConvChoices choices_;
  std::vector<std::string> notes_;
  gpu::DeviceBuffer workspace_;
};

}  // namespace fusetune::worker
