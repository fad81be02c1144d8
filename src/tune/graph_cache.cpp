#include "tune/graph_cache.hpp"

#include <algorithm>

namespace fusetune::tune {

gpu::GraphDesc GraphCache::desc(const codegen::GraphStep& step) const {
  gpu::GraphDesc d;
  d.problem = problem_;
  d.in_layout = step.in_layout;
  d.epilogue = step.epilogue;
  d.bias = problem_.conv.bias;
  d.math = math_;
  return d;
}

gpu::GraphDesc GraphCache::conv_alone(spec::Layout layout) const {
  gpu::GraphDesc d;
  d.problem = problem_;
  d.in_layout = layout;
  d.math = math_;
  return d;
}

gpu::CudnnGraph& GraphCache::graph(const gpu::GraphDesc& d) {
  if (auto it = graphs_.find(d); it != graphs_.end()) return *it->second;
  auto g = std::make_unique<gpu::CudnnGraph>(handle_.get(), d);
  return *graphs_.emplace(d, std::move(g)).first->second;
}

std::vector<gpu::GraphEngine> GraphCache::engines(const gpu::GraphDesc& d, size_t most, bool build) {
  return graph(d).engines(most, build);
}

CUdeviceptr GraphCache::workspace(int64_t bytes_needed, size_t& bytes) {
  bytes = size_t(std::max<int64_t>(bytes_needed, 256));
  return pool_.ensure("graph_workspace", bytes, stream_);
}

void GraphCache::run(const gpu::GraphDesc& d, const codegen::EngineKey& key, const gpu::GraphBuffers& buffers) {
  gpu::CudnnGraph& g = graph(d);
  size_t bytes = 0;
  const CUdeviceptr ws = workspace(g.prepare(key), bytes);
  g.execute(key, buffers, ws, bytes);
}

void GraphCache::run_named(const gpu::GraphDesc& d, const std::string& name, const gpu::GraphBuffers& buffers) {
  gpu::CudnnGraph& g = graph(d);
  size_t bytes = 0;
  const CUdeviceptr ws = workspace(g.prepare_named(name), bytes);
  g.execute_named(name, buffers, ws, bytes);
}

std::string GraphCache::name(const gpu::GraphDesc& d, const codegen::EngineKey& key) { return graph(d).name(key); }

}  // namespace fusetune::tune
