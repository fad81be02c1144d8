#include "worker/plan_runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/driver_api.hpp"
#include "worker/context_lost.hpp"

namespace fusetune::worker {

namespace {

// Version-2 plans (codegen::generate_model_variants) are not run here yet: `tune` refuses their
// problems before a worker starts (spec::why_not_tunable), so only a hand-made request gets here.
[[noreturn]] void not_run_yet(const codegen::Variant& v, const char* what) {
  throw Error(ExitCode::failure, fmt::format("{}: {} is not run by the worker yet", v.name, what));
}

}  // namespace

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
        if (!k.buffers_only()) not_run_yet(l.variant, "a per-stage kernel (null or by-value arguments)");
        CUfunction f = l.module->function(k.name);
        if (k.launch.smem_bytes > 48 * 1024) gpu::set_max_dynamic_smem(f, int(k.launch.smem_bytes));
        l.functions.push_back(f);
        break;
      }
      case codegen::StepKind::gemm: not_run_yet(l.variant, "a cuBLASLt GEMM step");
      case codegen::StepKind::conv_nd: not_run_yet(l.variant, "an N-d conv step");
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
      b.buffers.push_back(draws_.input(draw, buf.kind));
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
      std::vector<CUdeviceptr> vals;
      vals.reserve(k.args.size());
      for (size_t a = 0; a < k.args.size(); ++a) {
        const codegen::BufferRef r = k.buffer_arg(a);  // load_variant refused other arguments
        CUdeviceptr p = b.buffers[r];
        const bool written = std::find(k.writes.begin(), k.writes.end(), a) != k.writes.end();
        if (b.redirect_step == i && written && r == l.variant.output) p = b.redirect_to;
        vals.push_back(p);
      }
      std::vector<void*> ptrs;
      ptrs.reserve(vals.size());
      for (auto& v : vals) ptrs.push_back(&v);
      const auto& L = k.launch;
      const CUresult r = gpu::driver().cuLaunchKernel(l.functions[i], L.grid[0], L.grid[1], L.grid[2], L.block[0],
                                                      L.block[1], L.block[2], L.smem_bytes, stream_, ptrs.data(),
                                                      nullptr);
      if (r != CUDA_SUCCESS) {
        if (gpu::is_sticky_error(r)) throw ContextLost{fmt::format("launch of {}: {}", k.name, gpu::cu_result_text(r))};
        throw gpu::CudaError(r, fmt::format("launch of {} failed: {}", k.name, gpu::cu_result_text(r)));
      }
      return;
    }
    case codegen::StepKind::gemm: not_run_yet(l.variant, "a cuBLASLt GEMM step");
    case codegen::StepKind::conv_nd: not_run_yet(l.variant, "an N-d conv step");
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
      case codegen::StepKind::kernel:
      case codegen::StepKind::gemm:  // load_variant refuses these two
      case codegen::StepKind::conv_nd: break;
    }
  }
  return out;
}

}  // namespace fusetune::worker
