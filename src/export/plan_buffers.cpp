#include "export/plan_buffers.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace fusetune::exporter {
namespace {

// "(N, C, H, W) = (128, 64, 128, 128)" and the product of the extents.
struct Dims {
  std::string text;
  int64_t elems = 1;
};

Dims dims(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  Dims d;
  for (int64_t v : values) d.elems *= v;
  d.text = fmt::format("({}) = ({})", fmt::join(names, ", "), fmt::join(values, ", "));
  return d;
}

// A conv-output-shaped tensor (N, channels, P, Q) in `layout`.
Dims conv_out_dims(const spec::Conv& c, int64_t channels, const std::string& channel_name, spec::Layout layout) {
  if (layout == spec::Layout::nhwc) return dims({"N", "P", "Q", channel_name}, {c.n, c.p(), c.q(), channels});
  return dims({"N", channel_name, "P", "Q"}, {c.n, channels, c.p(), c.q()});
}

// The layout of y and the scratch buffers: that of the plan's (first) convolution. Kernels
// that change layout write `out`, never y or tmp*.
spec::Layout conv_layout(const codegen::Variant& v) {
  for (const auto& st : v.plan) {
    if (st.kind == codegen::StepKind::cudnn_conv) return st.conv_layout;
  }
  return spec::Layout::nchw;
}

bool is_scratch(const std::string& name) {
  return name.size() > 3 && name.starts_with("tmp") &&
         std::all_of(name.begin() + 3, name.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

BufferInfo describe(const spec::Problem& problem, const codegen::Variant& v, const std::string& name) {
  const spec::Conv& c = problem.conv;
  BufferInfo b;
  b.name = name;
  Dims d;
  if (name == "x") {
    b.what = "the problem's input";
    b.layout = layout_name(c.in);
    d = c.in == spec::Layout::nhwc ? dims({"N", "H", "W", "C"}, {c.n, c.h, c.w, c.c})
                                   : dims({"N", "C", "H", "W"}, {c.n, c.c, c.h, c.w});
  } else if (name == "x_nhwc") {
    b.what = "the input, channels-last, for cuDNN's NHWC convolution";
    b.layout = "NHWC";
    d = dims({"N", "H", "W", "C"}, {c.n, c.h, c.w, c.c});
  } else if (name == "w") {
    b.what = "the conv filters, as PyTorch's Conv2d.weight";
    b.layout = "KCRS";
    d = dims({"K", "C", "R", "S"}, {c.k, c.c, c.r, c.s});
  } else if (name == "w_krsc") {
    b.what = "the conv filters, channels-last (cuDNN's NHWC filter format)";
    b.layout = "KRSC";
    d = dims({"K", "R", "S", "C"}, {c.k, c.r, c.s, c.c});
  } else if (name == "y") {
    b.what = "the conv output";
    b.layout = layout_name(conv_layout(v));
    d = conv_out_dims(c, c.k, "K", conv_layout(v));
  } else if (is_scratch(name)) {
    b.what = "scratch of conv-output size (after a channel reduction only (N, 1, P, Q) of it is used)";
    b.layout = layout_name(conv_layout(v));
    d = conv_out_dims(c, c.k, "K", conv_layout(v));
  } else if (name == "out") {
    b.what = "the problem's output";
    const spec::Layout l = name == v.output_buffer       ? v.output_layout
                           : c.out == spec::Layout::nhwc ? spec::Layout::nhwc
                                                         : spec::Layout::nchw;
    b.layout = layout_name(l);
    d = problem.reduce ? conv_out_dims(c, 1, "1", l) : conv_out_dims(c, c.k, "K", l);
  } else if (name == "chan") {
    std::vector<std::string> parts;
    if (c.bias) parts.emplace_back("conv bias");
    for (int i = 0; i < problem.num_params; ++i) parts.push_back(fmt::format("param {}", i));
    b.what = parts.empty() ? "per-channel values: none in this problem (may be null)"
                           : fmt::format("per-channel values, K each, in this order: {}", fmt::join(parts, ", "));
    b.layout = "per-channel";
    d.elems = c.k * int64_t(parts.size());
    d.text = fmt::format("({} x K) = ({} x {})", parts.size(), parts.size(), c.k);
  } else {
    throw Error(ExitCode::failure, fmt::format("the plan of {} uses a buffer '{}' this exporter does not know; "
                                               "update src/export/plan_buffers.cpp",
                                               v.name, name));
  }
  b.dims = d.text;
  b.floats = d.elems;
  return b;
}

}  // namespace

std::string layout_name(spec::Layout layout) { return layout == spec::Layout::nhwc ? "NHWC" : "NCHW"; }

std::string conv_filters(const codegen::Step& step) { return step.conv_layout == spec::Layout::nhwc ? "w_krsc" : "w"; }

std::vector<std::string> step_buffers(const codegen::Step& step) {
  if (step.kind == codegen::StepKind::kernel) return step.args;
  std::vector<std::string> names{step.in, conv_filters(step)};
  if (step.with_bias) names.emplace_back("chan");
  names.push_back(step.out);
  return names;
}

std::vector<BufferInfo> plan_buffers(const spec::Problem& problem, const codegen::Variant& variant) {
  std::vector<BufferInfo> out;
  for (const auto& st : variant.plan) {
    for (const auto& name : step_buffers(st)) {
      auto it = std::find_if(out.begin(), out.end(), [&](const BufferInfo& b) { return b.name == name; });
      if (it == out.end()) {
        out.push_back(describe(problem, variant, name));
        it = out.end() - 1;
      }
      if (name == st.out) it->written = true;
    }
  }
  return out;
}

}  // namespace fusetune::exporter
