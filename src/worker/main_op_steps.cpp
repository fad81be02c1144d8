#include "worker/main_op_steps.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/error.hpp"

namespace fusetune::worker {

// Built in place: neither the plan nor the graph is copied or moved once made.
struct MainOpSteps::Gemm {
  std::optional<gpu::GemmPlan> plan;
  gpu::GemmAlgo algo;
};

// cuDNN's graph and the configuration that runs (built, prepare'd, already); where cuDNN refused
// the bias in the graph, its graph of the conv alone and fusetune's bias kernel after it (both
// set); where it built nothing at all, fusetune's own conv (no graph). `refused`: cuDNN's reason.
struct MainOpSteps::Conv {
  std::unique_ptr<ConvNdGraph> graph;
  GraphEngine engine;
  std::unique_ptr<ConvNdDirect> direct;  // with a graph: its bias kernel; without: the whole conv
  std::string refused;
};

namespace {

// ", epilogue relu" for a step with cuBLASLt's activation; empty without.
std::string activation_text(GemmActivation a) {
  return a == GemmActivation::none ? std::string() : fmt::format(", epilogue {}", gemm_activation_name(a));
}

}  // namespace

MainOpSteps::MainOpSteps(gpu::CudnnHandle& cudnn, const spec::Problem& problem, MathMode math, BufferPool& pool,
                         CUstream s, std::string arch)
    : cudnn_(cudnn), problem_(problem), math_(math), pool_(pool), stream_(s), arch_(std::move(arch)) {}

MainOpSteps::~MainOpSteps() = default;

MainOpSteps::Gemm& MainOpSteps::gemm_plan(const codegen::GemmStep& step) {
  auto& slot = gemms_[GemmKey{step.linear, step.bias.has_value(), step.activation, step.algo}];
  if (slot) return *slot;
  if (!lt_) lt_.emplace();
  auto made = std::make_unique<Gemm>();
  // The step's GEMM is the problem's (check_variant), its bias flag included: run() refuses a
  // bias pointer that disagrees with it.
  const spec::Gemm& g = step.gemm;
  made->plan.emplace(*lt_, g, step.linear, math_, 256, step.activation);
  std::vector<gpu::GemmAlgo> algos = made->plan->algorithms(step.algo + 1, kMaxGemmWorkspace);
  if (algos.empty())
    throw Error(ExitCode::failure, fmt::format("cuBLASLt has no algorithm for the GEMM (batch {}, M {}, K {}, N {}{})",
                                               g.batch, g.m, g.k, g.n, activation_text(step.activation)));
  if (size_t(step.algo) >= algos.size())
    throw Error(ExitCode::failure, fmt::format("cuBLASLt's heuristic offers {} algorithm(s) for the GEMM{}, none of rank {}",
                                               algos.size(), activation_text(step.activation), step.algo));
  made->algo = algos[size_t(step.algo)];
  slot = std::move(made);
  return *slot;
}

void MainOpSteps::gemm(const codegen::GemmStep& step, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias,
                       CUdeviceptr out) {
  Gemm& g = gemm_plan(step);
  const size_t ws_bytes = std::max<size_t>(g.algo.workspace_bytes, 256);
  const CUdeviceptr ws = pool_.ensure("gemm_workspace", ws_bytes, stream_);
  g.plan->run(g.algo, a, b, bias, out, ws, ws_bytes, stream_);
}

// The first configuration, in the heuristics' order, whose plan builds; GraphRefused when
// cuDNN refuses the graph or builds none.
std::unique_ptr<MainOpSteps::Conv> MainOpSteps::cudnn_conv(const codegen::ConvNdStep& step, bool bias) {
  const ConvNdDesc desc{step.main, problem_.conv, step.layout, bias, math_};
  auto graph = std::make_unique<ConvNdGraph>(cudnn_.get(), desc);
  // Listed without building (building every configuration costs seconds for a 3-d conv), then
  // built in the heuristics' order until one builds.
  std::string reasons;
  for (GraphEngine& e : graph->engines(0, false)) {
    try {
      e.workspace = e.by_name_only ? graph->prepare_named(e.name) : graph->prepare(e.key);
    } catch (const GraphRefused& r) {
      if (reasons.size() < 400) reasons += fmt::format("; {}: {}", e.name, r.what());
      continue;
    }
    e.built = true;
    auto made = std::make_unique<Conv>();
    made->graph = std::move(graph);
    made->engine = std::move(e);
    return made;
  }
  throw GraphRefused("cuDNN built none of the conv graph's configurations" + reasons);
}

MainOpSteps::Conv& MainOpSteps::conv_graph(const codegen::ConvNdStep& step) {
  auto& slot = convs_[ConvKey{step.main, step.layout, step.bias.has_value()}];
  if (slot) return *slot;
  const bool bias = step.bias.has_value();
  std::string refused;
  try {
    slot = cudnn_conv(step, bias);
    return *slot;
  } catch (const GraphRefused& r) {
    if (step.layout != spec::Layout::nchw) throw;  // fusetune's kernels below are channels-first
    refused = r.what();
  }
  // cuDNN refuses every transposed conv with the bias inside the graph (call 123's
  // gpu_conv_nd_graph_test: each `_bias` transposed case refused, each `_nobias` one ran; call
  // 128: KernelBench #2 then ran fusetune's whole conv, 40.9 ms). Its conv alone, then the bias
  // as a kernel of ours, as PyTorch adds it.
  if (bias) {
    try {
      std::unique_ptr<Conv> alone = cudnn_conv(step, false);
      alone->direct = std::make_unique<ConvNdDirect>(problem_, arch_);  // before the slot is filled
      alone->refused = refused;
      slot = std::move(alone);
      return *slot;
    } catch (const GraphRefused& r) {
      refused += std::string("; without the bias: ") + r.what();
    }
  }
  // Call 123: a transposed 3-D conv with two channels had no engine at all, so the problem had
  // neither a floor nor an unfused candidate. fusetune's own conv runs instead; its label says
  // so, so its time is never taken for cuDNN's.
  auto made = std::make_unique<Conv>();
  made->direct = std::make_unique<ConvNdDirect>(problem_, arch_);
  made->refused = refused;
  slot = std::move(made);
  return *slot;
}

void MainOpSteps::conv_nd(const codegen::ConvNdStep& step, const ConvNdBuffers& buffers) {
  Conv& c = conv_graph(step);
  if (c.direct && !c.graph) {
    // the plan hands a bias pointer only when the step has one (check_variant)
    c.direct->run(buffers, stream_);
    return;
  }
  const size_t ws_bytes = size_t(std::max<int64_t>(c.engine.workspace, 256));
  const CUdeviceptr ws = pool_.ensure("graph_workspace", ws_bytes, stream_);
  if (c.engine.by_name_only) {
    c.graph->execute_named(c.engine.name, buffers, ws, ws_bytes);
  } else {
    c.graph->execute(c.engine.key, buffers, ws, ws_bytes);
  }
  // the graph of the conv alone does not read the bias (ConvNdGraph packs it only with desc.bias)
  if (c.direct) c.direct->add_bias(buffers.y, buffers.bias, stream_);
}

std::optional<std::string> MainOpSteps::label(const codegen::GemmStep& step) const {
  const auto it = gemms_.find(GemmKey{step.linear, step.bias.has_value(), step.activation, step.algo});
  if (it == gemms_.end()) return std::nullopt;
  return it->second->algo.name() + activation_text(step.activation);
}

std::optional<std::string> MainOpSteps::label(const codegen::ConvNdStep& step) const {
  const auto it = convs_.find(ConvKey{step.main, step.layout, step.bias.has_value()});
  if (it == convs_.end()) return std::nullopt;
  const Conv& c = *it->second;
  if (c.graph && c.direct)
    return "cuDNN graph " + c.engine.name + " + fusetune bias add (cuDNN refused the bias in the graph)";
  if (c.direct) return "fusetune direct conv (fp32; cuDNN's graph: " + c.refused.substr(0, 200) + ")";
  return "cuDNN graph " + c.engine.name;
}

}  // namespace fusetune::worker
