#include "codegen/variant.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/candidates.hpp"

namespace fusetune::codegen {

std::string_view candidate_name(Candidate c) { return candidate_info(c).name; }

std::optional<Candidate> candidate_from_name(std::string_view name) {
  if (const CandidateInfo* row = candidate_info(name)) return row->id;
  return std::nullopt;
}

Role role_of(Candidate c) { return candidate_info(c).role; }

std::string_view role_name(Role r) {
  switch (r) {
    case Role::baseline: return "baseline";
    case Role::floor: return "floor";
    case Role::solution: return "solution";
  }
  return "?";
}

std::string_view buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::input: return "input";
    case BufferKind::filters: return "filters";
    case BufferKind::channels: return "channels";
    case BufferKind::scratch: return "scratch";
    case BufferKind::weights: return "weights";
    case BufferKind::bias: return "bias";
    case BufferKind::param: return "param";
    case BufferKind::extra: return "extra";
  }
  return "?";
}

std::optional<BufferKind> buffer_kind_from_name(std::string_view name) {
  for (BufferKind k : {BufferKind::input, BufferKind::filters, BufferKind::channels, BufferKind::scratch,
                       BufferKind::weights, BufferKind::bias, BufferKind::param, BufferKind::extra})
    if (buffer_kind_name(k) == name) return k;
  return std::nullopt;
}

std::string_view tensor_layout_name(TensorLayout l) {
  switch (l) {
    case TensorLayout::nchw: return "NCHW";
    case TensorLayout::nhwc: return "NHWC";
    case TensorLayout::kcrs: return "KCRS";
    case TensorLayout::krsc: return "KRSC";
    case TensorLayout::vector: return "vector";
    case TensorLayout::row_major: return "row-major";
  }
  return "?";
}

std::optional<TensorLayout> tensor_layout_from_name(std::string_view name) {
  for (TensorLayout l :
       {TensorLayout::nchw, TensorLayout::nhwc, TensorLayout::kcrs, TensorLayout::krsc, TensorLayout::vector,
        TensorLayout::row_major})
    if (tensor_layout_name(l) == name) return l;
  return std::nullopt;
}

int64_t Buffer::floats() const {
  int64_t n = 1;
  for (const auto& d : dims) n *= d.second;
  return n;
}

std::string Buffer::dims_text() const {
  std::vector<std::string> names;
  std::vector<int64_t> values;
  for (const auto& [n, v] : dims) {
    names.push_back(n);
    values.push_back(v);
  }
  return fmt::format("({}) = ({})", fmt::join(names, ", "), fmt::join(values, ", "));
}

std::vector<BufferRef> Step::reads() const {
  switch (kind()) {
    case StepKind::cudnn_conv: {
      const ConvStep& c = conv();
      std::vector<BufferRef> r{c.in, c.filters};
      if (c.bias) r.push_back(*c.bias);
      return r;
    }
    case StepKind::cudnn_graph: {
      const GraphStep& g = graph();
      std::vector<BufferRef> r{g.in, g.filters};
      if (g.chan) r.push_back(*g.chan);
      return r;
    }
    case StepKind::kernel: {
      const KernelStep& k = kernel();
      std::vector<BufferRef> r;
      for (size_t i = 0; i < k.args.size(); ++i)
        if (const auto b = arg_buffer(k.args[i]); b && std::find(k.writes.begin(), k.writes.end(), i) == k.writes.end())
          r.push_back(*b);
      return r;
    }
    case StepKind::gemm: {
      const GemmStep& g = gemm();
      std::vector<BufferRef> r{g.a, g.b};
      if (g.bias) r.push_back(*g.bias);
      return r;
    }
    case StepKind::conv_nd: {
      const ConvNdStep& c = conv_nd();
      std::vector<BufferRef> r{c.in, c.filters};
      if (c.bias) r.push_back(*c.bias);
      return r;
    }
  }
  return {};
}

std::vector<BufferRef> Step::writes() const {
  switch (kind()) {
    case StepKind::cudnn_conv: return {conv().out};
    case StepKind::cudnn_graph: return {graph().out};
    case StepKind::kernel: {
      const KernelStep& k = kernel();
      std::vector<BufferRef> w;
      for (size_t i : k.writes)
        if (i < k.args.size())
          if (const auto b = arg_buffer(k.args[i])) w.push_back(*b);
      return w;
    }
    case StepKind::gemm: return {gemm().out};
    case StepKind::conv_nd: return {conv_nd().out};
  }
  return {};
}

std::optional<BufferRef> Variant::find_buffer(std::string_view buffer_name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == buffer_name) return BufferRef(i);
  return std::nullopt;
}

std::optional<size_t> Variant::in_place_output_step() const {
  for (size_t i = plan.size(); i-- > 0;) {
    const auto w = plan[i].writes();
    if (std::find(w.begin(), w.end(), output) == w.end()) continue;
    const auto r = plan[i].reads();
    if (plan[i].kind() == StepKind::kernel && std::find(r.begin(), r.end(), output) != r.end()) return i;
    return std::nullopt;
  }
  return std::nullopt;
}

bool Variant::model_plan() const {
  for (const Buffer& b : buffers) {
    switch (b.kind) {
      case BufferKind::input:
      case BufferKind::filters:
      case BufferKind::channels:
      case BufferKind::scratch: break;
      case BufferKind::weights:
      case BufferKind::bias:
      case BufferKind::param:
      case BufferKind::extra: return true;
    }
  }
  for (const Step& st : plan) {
    switch (st.kind()) {
      case StepKind::cudnn_conv:
      case StepKind::cudnn_graph: break;
      case StepKind::kernel:
        if (!st.kernel().buffers_only()) return true;
        break;
      case StepKind::gemm:
      case StepKind::conv_nd: return true;
    }
  }
  return false;
}

}  // namespace fusetune::codegen
