#include "worker/graph_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace fusetune::worker {

worker::GraphDesc GraphCache::desc(const codegen::GraphStep& step) const {
  worker::GraphDesc d;
  d.problem = problem_;
  d.in_layout = step.in_layout;
  d.epilogue = step.epilogue;
  d.bias = problem_.conv.bias;
  d.math = math_;
  return d;
}

worker::GraphDesc GraphCache::conv_alone(spec::Layout layout) const {
  worker::GraphDesc d;
  d.problem = problem_;
  d.in_layout = layout;
  d.math = math_;
  return d;
}

worker::CudnnGraph& GraphCache::graph(const worker::GraphDesc& d) {
  if (auto it = graphs_.find(d); it != graphs_.end()) return *it->second;
  auto g = std::make_unique<worker::CudnnGraph>(handle_.get(), d);
  return *graphs_.emplace(d, std::move(g)).first->second;
}

std::vector<worker::GraphEngine> GraphCache::engines(const worker::GraphDesc& d, size_t most, bool build) {
  return graph(d).engines(most, build);
}

CUdeviceptr GraphCache::workspace(int64_t bytes_needed, size_t& bytes) {
  bytes = size_t(std::max<int64_t>(bytes_needed, 256));
  return pool_.ensure("graph_workspace", bytes, stream_);
}

void GraphCache::prebuild(const worker::GraphDesc& d, const codegen::EngineKey& key) {
  if (!ahead_ || ahead_built_.count({d, key}) != 0) return;
  if (auto it = graphs_.find(d); it != graphs_.end() && it->second->built(key)) return;
  ahead_->ask(d, key);
}

void GraphCache::run(const worker::GraphDesc& d, const codegen::EngineKey& key, const worker::GraphBuffers& buffers) {
  if (ahead_) {
    auto it = ahead_built_.find({d, key});
    const auto here = graphs_.find(d);
    if (it == ahead_built_.end() && !(here != graphs_.end() && here->second->built(key))) {
      double waited = 0;
      std::unique_ptr<PlanPrebuilder::Built> b = ahead_->take(d, key, &waited);
      if (b && b->error) {
        // cuDNN's refusal is the configuration's answer, wherever it was built. Anything else
        // (a handle or memory that another thread could not have) is retried here, inline.
        try {
          std::rethrow_exception(b->error);
        } catch (const worker::GraphRefused&) {
          throw;
        } catch (...) {
          b.reset();
        }
      }
      if (b) {
        notes_.push_back(fmt::format("cuDNN plan of {} built ahead on another thread in {:.2f} s; its first run "
                                     "waited {:.2f} s for it",
                                     b->graph->name(key), b->build_s, waited));
        it = ahead_built_.emplace(std::make_pair(d, key), std::move(b)).first;
      }
    }
    if (it != ahead_built_.end()) {
      // Its own handle, made for it on a building thread and used by this thread alone now.
      worker::CudnnGraph& g = *it->second->graph;
      size_t bytes = 0;
      const CUdeviceptr ws = workspace(g.prepare(key), bytes);
      g.execute(key, buffers, ws, bytes);
      return;
    }
  }
  worker::CudnnGraph& g = graph(d);
  size_t bytes = 0;
  const CUdeviceptr ws = workspace(g.prepare(key), bytes);
  g.execute(key, buffers, ws, bytes);
}

void GraphCache::run_named(const worker::GraphDesc& d, const std::string& name, const worker::GraphBuffers& buffers) {
  worker::CudnnGraph& g = graph(d);
  size_t bytes = 0;
  const CUdeviceptr ws = workspace(g.prepare_named(name), bytes);
  g.execute_named(name, buffers, ws, bytes);
}

std::string GraphCache::name(const worker::GraphDesc& d, const codegen::EngineKey& key) {
  if (auto it = ahead_built_.find({d, key}); it != ahead_built_.end()) return it->second->graph->name(key);
  return graph(d).name(key);
}

}  // namespace fusetune::worker
