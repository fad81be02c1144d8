#include "export/plan_buffers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::exporter {

std::string layout_name(spec::Layout layout) { return layout == spec::Layout::nhwc ? "NHWC" : "NCHW"; }

void refuse_model_plan(const std::string& variant_name) {
  throw InputError(fmt::format("{} is a version-2 plan (GEMM or N-d conv steps, per-stage kernels): no export format "
                               "writes those yet",
                               variant_name));
}

std::vector<codegen::BufferRef> step_buffers(const codegen::Step& step) {
  switch (step.kind()) {
    case codegen::StepKind::kernel: {
      std::vector<codegen::BufferRef> refs;
      for (const auto& a : step.kernel().args)
        if (const auto r = codegen::arg_buffer(a)) refs.push_back(*r);
      return refs;
    }
    case codegen::StepKind::gemm: {
      const auto& g = step.gemm();
      std::vector<codegen::BufferRef> refs{g.a, g.b};
      if (g.bias) refs.push_back(*g.bias);
      refs.push_back(g.out);
      return refs;
    }
    case codegen::StepKind::conv_nd: {
      const auto& c = step.conv_nd();
      std::vector<codegen::BufferRef> refs{c.in, c.filters};
      if (c.bias) refs.push_back(*c.bias);
      refs.push_back(c.out);
      return refs;
    }
    case codegen::StepKind::cudnn_conv: {
      const auto& c = step.conv();
      std::vector<codegen::BufferRef> refs{c.in, c.filters};
      if (c.bias) refs.push_back(*c.bias);
      refs.push_back(c.out);
      return refs;
    }
    case codegen::StepKind::cudnn_graph: {
      const auto& g = step.graph();
      std::vector<codegen::BufferRef> refs{g.in, g.filters};
      if (g.chan) refs.push_back(*g.chan);
      refs.push_back(g.out);
      return refs;
    }
  }
  return {};
}

std::vector<BufferInfo> plan_buffers(const codegen::Variant& variant) {
  std::vector<codegen::BufferRef> order;
  std::vector<bool> written(variant.buffers.size(), false);
  for (const auto& st : variant.plan) {
    for (codegen::BufferRef r : step_buffers(st))
      if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
    for (codegen::BufferRef r : st.writes()) written[r] = true;
  }
  std::vector<BufferInfo> out;
  for (codegen::BufferRef r : order) {
    const codegen::Buffer& b = variant.buffer(r);
    out.push_back({b.name, b.what, std::string(codegen::tensor_layout_name(b.layout)), b.dims_text(), b.floats(),
                   bool(written[r])});
  }
  return out;
}

}  // namespace fusetune::exporter
