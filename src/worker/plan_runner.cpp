#include "worker/plan_runner.hpp"

#include <fmt/format.h>

#include <optional>

#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"
#include "worker/context_lost.hpp"
#include "worker/kernel_args.hpp"

namespace fusetune::worker {

Loaded load_variant(codegen::Variant variant, const std::string& cubin) {
  Loaded l;
  l.variant = std::move(variant);
  if (!cubin.empty()) l.module.emplace(cubin);
  l.engine = codegen::engine_of(l.variant);
  for (const auto& st : l.variant.plan) {
    switch (st.kind()) {
      case codegen::StepKind::cudnn_conv: l.functions.push_back(nullptr); break;
      case codegen::StepKind::cudnn_graph:
        if (!l.engine)
          throw Error(ExitCode::failure, fmt::format("{}: a cuDNN graph step but no engine configuration (eng)",
                                                     l.variant.name));
        l.functions.push_back(nullptr);
        break;
      case codegen::StepKind::kernel: {
        if (!l.module)
          throw Error(ExitCode::failure, fmt::format("{}: a kernel step but no compiled module", l.variant.name));
        const auto& k = st.kernel();
        CUfunction f = l.module->function(k.name);
        if (k.launch.smem_bytes > 48 * 1024) gpu::set_max_dynamic_smem(f, int(k.launch.smem_bytes));
        l.functions.push_back(f);
        break;
      }
      // Version-2 main operators: built on their first run (MainOpSteps), not here.
      case codegen::StepKind::gemm:
      case codegen::StepKind::conv_nd: l.functions.push_back(nullptr); break;
    }
  }
  return l;
}

Binding PlanRunner::bind(const codegen::Variant& v, int draw) {
  Binding b;
  for (const auto& buf : v.buffers) {
    if (buf.kind == codegen::BufferKind::scratch) {
      b.buffers.push_back(pool_.ensure(buf.name, 4 * size_t(buf.floats()), stream_));
    } else {
      b.buffers.push_back(draws_.input(draw, buf));
    }
  }
  return b;
}

void PlanRunner::run_step(const Loaded& l, size_t i, const Binding& b) {
  const auto& st = l.variant.plan[i];
  switch (st.kind()) {
    case codegen::StepKind::cudnn_conv: {
      const auto& c = st.conv();
      convs_.forward(c.layout, b.buffers[c.in], b.buffers[c.filters], b.buffers[c.out],
                     c.bias ? b.buffers[*c.bias] : 0);
      return;
    }
    case codegen::StepKind::cudnn_graph: {
      const auto& g = st.graph();
      worker::GraphBuffers gb;
      gb.x = b.buffers[g.in];
      gb.w = b.buffers[g.filters];
      gb.chan = g.chan ? b.buffers[*g.chan] : 0;
      gb.out = b.buffers[g.out];
      graphs_.run(graphs_.desc(g), *l.engine, gb);
      return;
    }
    case codegen::StepKind::kernel: {
      const auto& k = st.kernel();
      KernelLaunchArgs args(k, b.buffers, l.variant.output,
                            b.redirect_step == i ? std::optional<CUdeviceptr>(b.redirect_to) : std::nullopt);
      const auto& L = k.launch;
      const CUresult r = gpu::driver().cuLaunchKernel(l.functions[i], L.grid[0], L.grid[1], L.grid[2], L.block[0],
                                                      L.block[1], L.block[2], L.smem_bytes, stream_, args.params(),
                                                      nullptr);
      if (r != CUDA_SUCCESS) {
        if (gpu::is_sticky_error(r)) throw ContextLost{fmt::format("launch of {}: {}", k.name, gpu::cu_result_text(r))};
        throw gpu::CudaError(r, fmt::format("launch of {} failed: {}", k.name, gpu::cu_result_text(r)));
      }
      return;
    }
    // Out of place, never an in-place output step: the redirect does not concern them.
    case codegen::StepKind::gemm: {
      const auto& g = st.gemm();
      main_ops_.gemm(g, b.buffers[g.a], b.buffers[g.b], g.bias ? b.buffers[*g.bias] : 0, b.buffers[g.out]);
      return;
    }
    case codegen::StepKind::conv_nd: {
      const auto& c = st.conv_nd();
      main_ops_.conv_nd(c, ConvNdBuffers{b.buffers[c.in], b.buffers[c.filters], c.bias ? b.buffers[*c.bias] : 0,
                                         b.buffers[c.out]});
      return;
    }
  }
}

void PlanRunner::run_all(const Loaded& l, const Binding& b) {
  for (size_t i = 0; i < l.variant.plan.size(); ++i) run_step(l, i, b);
}

void PlanRunner::run_untimed(const Loaded& l, const Binding& b) {
  for (size_t i = 0; i < l.variant.plan.size(); ++i)
    if (!l.variant.plan[i].timed) run_step(l, i, b);
}

std::vector<std::string> PlanRunner::conv_labels(const codegen::Variant& v) {
  std::vector<std::string> out;
  for (const auto& st : v.plan) {
    switch (st.kind()) {
      case codegen::StepKind::cudnn_conv: out.push_back(convs_.label(st.conv().layout)); break;
      case codegen::StepKind::cudnn_graph:
        if (const auto key = codegen::engine_of(v)) out.push_back("cuDNN graph " + graphs_.name(graphs_.desc(st.graph()), *key));
        break;
      case codegen::StepKind::gemm:
        if (auto label = main_ops_.label(st.gemm())) out.push_back(std::move(*label));
        break;
      case codegen::StepKind::conv_nd:
        if (auto label = main_ops_.label(st.conv_nd())) out.push_back(std::move(*label));
        break;
      case codegen::StepKind::kernel: break;
    }
  }
  return out;
}

}  // namespace fusetune::worker
