#pragma once
// cuDNN's graph API (cudnn-frontend, pinned by scripts/setup.sh) for one problem: the conv, its
// bias, and (for `epilogue` graphs) the problem's ops before the channel reduction and the
// reduction itself, as ONE operation graph that cuDNN's runtime-fusion engines compile at run
// time. The graph's tensors: x in the step's input layout, the filters KRSC, the output
// channels-last, per-channel operands as [1, K, 1, 1] channels-last views into the `chan`
// buffer, scalars embedded as pass-by-value constants. Ops without a cuDNN pointwise mode are
// composed from ones that exist (mish = x * tanh(softplus(x)), hardswish = x * clamp(x/6 + 1/2,
// 0, 1), clamp = min(max(x, lo), hi), ...); a mean reduction is a sum (1/K is the caller's).
//
// Every engine configuration cuDNN offers (heuristic modes A and B, then the fallback list) is
// a separate choice, named by its engine index and knob values so a stored choice can be built
// again without the heuristics. A configuration with a knob the frontend cannot name has no
// such key; it is found again by cuDNN's own name for it (its tag), by listing the
// configurations anew (`by_name_only`). Plans are built once per configuration and kept.
//
// Only this header's .cpp includes cudnn_frontend.h (it is slow to compile); needs a GPU.
#include <cudnn.h>
#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/cudnn_engine.hpp"
#include "common/error.hpp"
#include "common/math_mode.hpp"
#include "spec/problem.hpp"

namespace fusetune::worker {

// cuDNN refused the graph or a configuration: a recorded `not_supported`, with cuDNN's reason.
class GraphRefused : public Error {
 public:
  explicit GraphRefused(const std::string& reason) : Error(ExitCode::failure, reason) {}
};

using codegen::EngineKey;

struct GraphEngine {
  EngineKey key;
  std::string name;       // cuDNN's tag, e.g. "eng7_k24=29_k25=1"
  bool built = false;     // the plan was built; else `reason` says why not
  std::string reason;
  int64_t workspace = 0;
  // A knob of it has no cudnn-frontend name (it comes back as NOT_SET), so `key` cannot build it
  // again: run it with execute_named(name), find it again with prepare_named(name).
  bool by_name_only = false;
};

// What the graph covers. A fused graph (epilogue: a codegen::GraphStep) reads x in `in_layout`
// and KRSC filters and writes channels-last; the conv alone (the conv step of every other
// design) has x, filters and output all in `in_layout` (KCRS filters for NCHW), like
// cudnnConvolutionForward's descriptors.
struct GraphDesc {
  spec::Problem problem;
  spec::Layout in_layout = spec::Layout::nhwc;  // x's layout: nchw or nhwc
  bool epilogue = false;                        // the ops before the reduction and the reduction too
  bool bias = false;                            // the conv bias (chan[0 .. K))
  MathMode math = MathMode::tf32;               // fp32: engines with the TENSOR_CORE note left out
  auto operator<=>(const GraphDesc& o) const {  // the graph's identity within one problem
    return std::tie(in_layout, epilogue, bias) <=> std::tie(o.in_layout, o.epilogue, o.bias);
  }
  bool operator==(const GraphDesc& o) const { return (*this <=> o) == 0; }
};

// Where the graph's tensors live for one run.
struct GraphBuffers {
  CUdeviceptr x = 0, w = 0, chan = 0, out = 0;
};

class CudnnGraph {
 public:
  // Builds and checks the operation graph. Throws GraphRefused when cuDNN refuses it, InputError
  // for an op the graph cannot express.
  CudnnGraph(cudnnHandle_t handle, const GraphDesc& desc);
  ~CudnnGraph();
  CudnnGraph(const CudnnGraph&) = delete;
  CudnnGraph& operator=(const CudnnGraph&) = delete;

  // Every configuration the heuristics (A, B) and the fallback list offer, deduplicated, in that
  // order, each built (in parallel) or with the reason it could not be; only the first `most`
  // when most > 0 (tests). build = false lists them unbuilt (`built` true: offered), for a
  // search that will run a few of them: prepare() builds each on first use, and cuDNN's refusal
  // then surfaces as GraphRefused (building all of them takes 5-17 s of a cold tune on the H200:
  // runtime-compiled kernels). Throws GraphRefused when cuDNN offers none.
  std::vector<GraphEngine> engines(size_t most = 0, bool build = true);

  // Builds the plan for `key` unless built already (a configuration from the database needs no
  // heuristics). Throws GraphRefused when cuDNN refuses it. Returns its workspace in bytes.
  int64_t prepare(const EngineKey& key);

  // Runs the configuration `key` (prepared first) on the handle's stream; asynchronous.
  void execute(const EngineKey& key, const GraphBuffers& buffers, CUdeviceptr workspace, size_t workspace_bytes);

  // The same by cuDNN's name of a configuration ("eng46_k2=4_k5=2_k14=3"): one built by engines()
  // in this process, else found by listing the configurations again and building the one of that
  // name. Throws GraphRefused when cuDNN no longer offers it (another cuDNN, another GPU).
  int64_t prepare_named(const std::string& name);
  void execute_named(const std::string& name, const GraphBuffers& buffers, CUdeviceptr workspace,
                     size_t workspace_bytes);

  [[nodiscard]] std::string name(const EngineKey& key) const;
  // Whether the plan for `key` is built in this graph already.
  [[nodiscard]] bool built(const EngineKey& key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusetune::worker
