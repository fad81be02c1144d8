#include "worker/graph_plans.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fusetune::worker::detail {

void check_graph(fe::error_t e, const std::string& what) {
  if (e.is_bad()) throw GraphRefused(fmt::format("cuDNN refused {}: {}", what, e.get_message()));
}

namespace {

EngineKey key_of(int64_t engine, const std::unordered_map<fe::KnobType_t, int64_t>& knobs) {
  EngineKey key;
  key.engine = engine;
  for (const auto& [type, value] : knobs) key.knobs.emplace_back(int64_t(type), value);
  std::sort(key.knobs.begin(), key.knobs.end());
  return key;
}

}  // namespace

std::shared_ptr<fe::graph::Graph> GraphPlans::listed() {
  auto g = make_();
  check_graph(g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::B, fe::HeurMode_t::FALLBACK}),
              "every engine configuration (heuristics A, B and fallback)");
  if (!deselect_.empty()) g->deselect_numeric_notes(deselect_);
  return g;
}

std::vector<GraphEngine> GraphPlans::engines(size_t most, bool build) {
  auto g = listed();
  const int64_t count = g->get_execution_plan_count();
  // Runtime-compiled plans take 0.2-1.8 s each to build, one after another below: the pinned
  // cudnn-frontend (1.32) answers build_plans(ALL, multithreaded) with "not yet supported" and
  // builds nothing, so a caller that will run only a few asks for `most` or build = false.
  std::vector<GraphEngine> out;
  for (int64_t i = 0; i < count && (most == 0 || out.size() < most); ++i) {
    GraphEngine e;
    int64_t engine = -1;
    std::unordered_map<fe::KnobType_t, int64_t> knobs;
    if (g->get_engine_and_knobs_at_index(i, engine, knobs).is_bad()) continue;
    e.key = key_of(engine, knobs);
    (void)g->get_plan_name_at_index(i, e.name);
    if (e.name.empty()) e.name = codegen::engine_label(e.key);
    // A knob this frontend cannot name comes back as NOT_SET: such a key cannot build the
    // same configuration again (seen on the H200: "convert_to_backend_knob_type ... failed"),
    // and two such configurations may share a key; cuDNN's name tells them apart. PyTorch's
    // NCHW conv of a 16-channel problem ran one of these (H200, 2026-12-01, call 17).
    e.by_name_only = knobs.count(fe::KnobType_t::NOT_SET) != 0;
    if (std::any_of(out.begin(), out.end(), [&](const GraphEngine& o) {
          return e.by_name_only || o.by_name_only ? o.name == e.name : o.key == e.key;
        }))
      continue;
    if (!build) {
      e.built = true;  // offered; prepare() builds it when it is first run
      out.push_back(std::move(e));
      continue;
    }
    fe::error_t built = g->build_plan_at_index(i);
    e.built = built.is_good();
    if (!e.built) {
      e.reason = built.get_message();
    } else if (g->get_workspace_size_plan_at_index(i, e.workspace).is_bad()) {
      e.built = false;
      e.reason = "cuDNN did not report the plan's workspace";
    }
    if (e.built) {
      const Plan plan{g, i, e.workspace, e.name};
      if (!e.by_name_only) plans_[e.key] = plan;
      named_[e.name] = plan;
    }
    out.push_back(std::move(e));
  }
  if (out.empty()) throw GraphRefused("cuDNN offers no engine configuration for this graph");
  return out;
}

int64_t GraphPlans::prepare(const EngineKey& key) {
  if (auto it = plans_.find(key); it != plans_.end()) return it->second.workspace;
  auto g = make_();
  std::unordered_map<fe::KnobType_t, int64_t> knobs;
  for (const auto& [type, value] : key.knobs) knobs[fe::KnobType_t(type)] = value;
  const std::string what = "engine configuration " + codegen::engine_label(key);
  check_graph(g->create_execution_plan(key.engine, knobs), what);
  if (!deselect_.empty()) g->deselect_numeric_notes(deselect_);  // a barred one fails its build below
  check_graph(g->check_support(), what);
  check_graph(g->build_plan_at_index(0), what);
  Plan plan{g, 0, 0, ""};
  check_graph(g->get_workspace_size_plan_at_index(0, plan.workspace), what);
  (void)g->get_plan_name_at_index(0, plan.name);
  plans_[key] = plan;
  return plan.workspace;
}

int64_t GraphPlans::prepare_named(const std::string& name) {
  if (auto it = named_.find(name); it != named_.end()) return it->second.workspace;
  auto g = listed();
  const int64_t count = g->get_execution_plan_count();
  for (int64_t i = 0; i < count; ++i) {
    std::string n;
    if (g->get_plan_name_at_index(i, n).is_bad() || n != name) continue;
    const std::string what = "engine configuration " + name;
    check_graph(g->build_plan_at_index(i), what);
    Plan plan{g, i, 0, name};
    check_graph(g->get_workspace_size_plan_at_index(i, plan.workspace), what);
    named_[name] = plan;
    return plan.workspace;
  }
  throw GraphRefused(fmt::format("cuDNN no longer offers the engine configuration {} for this graph", name));
}

void GraphPlans::run_plan(const Plan& plan, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
                          CUdeviceptr workspace, size_t workspace_bytes) {
  if (int64_t(workspace_bytes) < plan.workspace)
    throw Error(ExitCode::failure, fmt::format("cuDNN plan {} needs {} bytes of workspace, got {}", plan.name,
                                               plan.workspace, workspace_bytes));
  check_graph(plan.graph->execute_plan_at_index(handle, pack, reinterpret_cast<void*>(static_cast<uintptr_t>(workspace)),
                                                plan.index),
              "to run plan " + plan.name);
}

void GraphPlans::run(const EngineKey& key, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
                     CUdeviceptr workspace, size_t workspace_bytes) {
  (void)prepare(key);
  run_plan(plans_.at(key), handle, pack, workspace, workspace_bytes);
}

void GraphPlans::run_named(const std::string& name, cudnnHandle_t handle, std::unordered_map<int64_t, void*>& pack,
                           CUdeviceptr workspace, size_t workspace_bytes) {
  (void)prepare_named(name);
  run_plan(named_.at(name), handle, pack, workspace, workspace_bytes);
}

std::string GraphPlans::name(const EngineKey& key) const {
  if (auto it = plans_.find(key); it != plans_.end() && !it->second.name.empty()) return it->second.name;
  return codegen::engine_label(key);
}

}  // namespace fusetune::worker::detail
