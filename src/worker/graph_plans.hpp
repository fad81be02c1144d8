#pragma once
// The part of a cuDNN graph that does not depend on what the graph computes: listing every
// engine configuration (heuristic modes A and B, then the fallback list), keying each by its
// engine index and knobs, building plans, and running them with a variant pack. A graph kind
// (worker/conv_nd_graph.cpp) gives it a function that makes a fresh graph with its operation
// graph built.
//
// Every graph kind shares it: the conv2d graphs (worker/cudnn_graph.cpp) and the N-d convs
// (worker/conv_nd_graph.cpp).
//
// Includes cudnn_frontend.h (slow to compile): include it from .cpp files only, never from a
// header another layer reads.
#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cudnn_frontend.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "worker/cudnn_graph.hpp"

namespace fusetune::worker::detail {

namespace fe = cudnn_frontend;

// Throws GraphRefused with cuDNN's message when `e` is bad.
void check_graph(fe::error_t e, const std::string& what);

// Strict fp32: no engine that uses the tensor cores (TF32 for fp32 data) or converts its inputs
// down.
[[nodiscard]] inline std::vector<fe::NumericalNote_t> strict_fp32_notes() {
  return {fe::NumericalNote_t::TENSOR_CORE, fe::NumericalNote_t::DOWN_CONVERT_INPUTS};
}

class GraphPlans {
 public:
  // A fresh graph, validated and with its operation graph built; throws GraphRefused.
  using MakeGraph = std::function<std::shared_ptr<fe::graph::Graph>()>;

  // `deselect`: numeric notes no configuration may carry (strict fp32: strict_fp32_notes()).
  // The frontend bars configurations by their notes only among those already listed, so the
  // notes are deselected after each listing, never on the fresh graph (where they barred
  // nothing: strict fp32 graphs ran TF32 engines, H100 2026-12-06, gpu_conv_nd_graph_test).
  explicit GraphPlans(MakeGraph make, std::vector<fe::NumericalNote_t> deselect = {})
      : make_(std::move(make)), deselect_(std::move(deselect)) {}

  // As CudnnGraph::engines: the first `most` (0: all), built or only listed.
  std::vector<GraphEngine> engines(size_t most, bool build);
  int64_t prepare(const EngineKey& key);
  int64_t prepare_named(const std::string& name);
  // Runs a prepared plan on the handle's stream with `pack` (uid -> device address).
  void run(const EngineKey& key, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack, CUdeviceptr workspace,
           size_t workspace_bytes);
  void run_named(const std::string& name, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
                 CUdeviceptr workspace, size_t workspace_bytes);
  [[nodiscard]] std::string name(const EngineKey& key) const;
  [[nodiscard]] bool built(const EngineKey& key) const { return plans_.count(key) != 0; }

 private:
  // A plan is (graph, index in its list): the heuristics' list, or a graph of one configuration.
  struct Plan {
    std::shared_ptr<fe::graph::Graph> graph;
    int64_t index = 0;
    int64_t workspace = 0;
    std::string name;
  };
  std::shared_ptr<fe::graph::Graph> listed();
  static void run_plan(const Plan& plan, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
                       CUdeviceptr workspace, size_t workspace_bytes);

  MakeGraph make_;
  std::vector<fe::NumericalNote_t> deselect_;
  std::map<EngineKey, Plan> plans_;
  std::map<std::string, Plan> named_;  // every plan built here, by cuDNN's name for it
};

}  // namespace fusetune::worker::detail
