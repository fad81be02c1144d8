#include "tune/conv_cache.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "reference/tolerance.hpp"
#include "tune/context_lost.hpp"

namespace fusetune::tune {

namespace {
int layout_key(spec::Layout l) { return l == spec::Layout::nhwc ? 1 : 0; }
}  // namespace

ConvAlgoCache::ConvAlgoCache(gpu::CudnnHandle& handle, const spec::Problem& problem, MathMode math, InputDraws& draws,
                             BufferPool& pool, reference::GpuReference& ref, CUstream s)
    : handle_(handle), problem_(problem), math_(math), draws_(draws), pool_(pool), ref_(ref), stream_(s) {}

gpu::CudnnConv& ConvAlgoCache::conv(spec::Layout layout) {
  const int key = layout_key(layout);
  if (auto it = convs_.find(key); it != convs_.end()) return *it->second;
  const bool nhwc = layout == spec::Layout::nhwc;
  auto conv = std::make_unique<gpu::CudnnConv>(handle_, problem_.conv, layout, math_);
  const size_t ws = conv->max_workspace_bytes();
  if (workspace_.size() < ws) workspace_ = gpu::DeviceBuffer(std::max<size_t>(ws, 256));

  if (auto it = choices_.find(key); it != choices_.end()) {
    gpu::ConvAlgoChoice ch;
    ch.algo = it->second.algo;
    ch.math_type = it->second.math_type;
    ch.time_ms = it->second.time_ms;
    ch.algo_name = gpu::fwd_algo_name(ch.algo);
    conv->choose(ch);
  } else {
    const Draw& d0 = draws_.draw(0);
    const CUdeviceptr x = nhwc ? d0.x_nhwc.ptr() : d0.x_nchw.ptr();
    const CUdeviceptr w = nhwc ? d0.w_krsc.ptr() : d0.w.ptr();
    const CUdeviceptr y = pool_.ensure("conv_probe", 4 * size_t(problem_.conv.conv_out_elems()), stream_);
    const auto ranked = conv->find(x, w, y, workspace_.ptr(), workspace_.size());
    bool found = false;
    for (const auto& ch : ranked) {
      conv->choose(ch);
      conv->forward(x, w, y, workspace_.ptr(), workspace_.size(), 0);
      sync_or_lose("cuDNN algorithm check");
      const auto e = ref_.compare(y, nhwc, *d0.answer.conv, stream_);
      const auto verdict = reference::judge(e, math_);
      if (verdict.ok) {
        found = true;
        break;
      }
      notes_.push_back(fmt::format("cuDNN {} conv {} rejected: {}", nhwc ? "NHWC" : "NCHW", conv->chosen_name(),
                                   verdict.reason));
    }
    if (!found)
      throw Error(ExitCode::failure, fmt::format("no cuDNN {} algorithm passes the {} verification rule",
                                                 nhwc ? "NHWC" : "NCHW", math_mode_name(math_)));
    const auto& ch = *conv->chosen();
    choices_[key] = ConvChoice{ch.algo, ch.math_type, ch.time_ms, conv->chosen_name()};
  }
  return *convs_.emplace(key, std::move(conv)).first->second;
}

}  // namespace fusetune::tune
