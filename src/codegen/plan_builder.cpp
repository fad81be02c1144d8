#include "codegen/plan_builder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace fusetune::codegen {

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

TensorLayout tensor_layout(spec::Layout l) { return l == spec::Layout::nhwc ? TensorLayout::nhwc : TensorLayout::nchw; }

Dims conv_dims(const spec::Conv& c, int64_t channels, const std::string& channel_name, spec::Layout layout) {
  if (layout == spec::Layout::nhwc) return {{"N", c.n}, {"P", c.p()}, {"Q", c.q()}, {channel_name, channels}};
  return {{"N", c.n}, {channel_name, channels}, {"P", c.p()}, {"Q", c.q()}};
}

}  // namespace

PlanBuilder::PlanBuilder(const spec::Problem& problem, Variant& v) : p_(problem), v_(v) {
  if (!v_.buffers.empty() || !v_.plan.empty()) throw Error(ExitCode::failure, "PlanBuilder: variant already has a plan");
}

BufferRef PlanBuilder::add(Buffer b) {
  if (auto r = v_.find_buffer(b.name)) {
    const Buffer& have = v_.buffers[*r];
    if (have.kind != b.kind || have.dims != b.dims || have.layout != b.layout)
      throw Error(ExitCode::failure, fmt::format("codegen: buffer '{}' declared twice with different shapes", b.name));
    return *r;
  }
  v_.buffers.push_back(std::move(b));
  return BufferRef(v_.buffers.size() - 1);
}

BufferRef PlanBuilder::x() {
  const spec::Conv& c = p_.conv;
  const bool nhwc = c.in == spec::Layout::nhwc;
  return add({"x", BufferKind::input, nhwc ? TensorLayout::nhwc : TensorLayout::nchw,
              nhwc ? Dims{{"N", c.n}, {"H", c.h}, {"W", c.w}, {"C", c.c}} : Dims{{"N", c.n}, {"C", c.c}, {"H", c.h}, {"W", c.w}},
              "the problem's input"});
}

BufferRef PlanBuilder::w() {
  const spec::Conv& c = p_.conv;
  return add({"w", BufferKind::filters, TensorLayout::kcrs, {{"K", c.k}, {"C", c.c}, {"R", c.r}, {"S", c.s}},
              "the conv filters, as PyTorch's Conv2d.weight"});
}

BufferRef PlanBuilder::chan() {
  std::vector<std::string> parts;
  if (p_.conv.bias) parts.emplace_back("conv bias");
  for (int i = 0; i < p_.num_params; ++i) parts.push_back(fmt::format("param {}", i));
  const std::string what = parts.empty() ? "per-channel values: none in this problem (may be null)"
                                         : fmt::format("per-channel values, K each, in this order: {}", fmt::join(parts, ", "));
  return add({"chan", BufferKind::channels, TensorLayout::vector, {{"vectors", int64_t(parts.size())}, {"K", p_.conv.k}},
              what});
}

BufferRef PlanBuilder::x_nhwc() {
  const spec::Conv& c = p_.conv;
  return add({"x_nhwc", BufferKind::scratch, TensorLayout::nhwc, {{"N", c.n}, {"H", c.h}, {"W", c.w}, {"C", c.c}},
              "the input, channels-last, for cuDNN's NHWC convolution"});
}

BufferRef PlanBuilder::w_krsc() {
  const spec::Conv& c = p_.conv;
  return add({"w_krsc", BufferKind::scratch, TensorLayout::krsc, {{"K", c.k}, {"R", c.r}, {"S", c.s}, {"C", c.c}},
              "the conv filters, channels-last (cuDNN's NHWC filter format)"});
}

BufferRef PlanBuilder::conv_shaped(const std::string& name, spec::Layout layout, int64_t channels,
                                   const std::string& what) {
  return add({name, BufferKind::scratch, tensor_layout(layout),
              conv_dims(p_.conv, channels, channels == p_.conv.k ? "K" : "C", layout), what});
}

BufferRef PlanBuilder::y(spec::Layout layout) { return conv_shaped("y", layout, p_.conv.k, "the conv output"); }

BufferRef PlanBuilder::out(spec::Layout layout) {
  return conv_shaped("out", layout, p_.out_channels(), "the problem's output");
}

BufferRef PlanBuilder::scratch(const std::string& name, TensorLayout layout,
                               std::vector<std::pair<std::string, int64_t>> dims, const std::string& what) {
  return add({name, BufferKind::scratch, layout, std::move(dims), what});
}

void PlanBuilder::conv(spec::Layout layout, BufferRef in, BufferRef filters, BufferRef out, bool with_bias) {
  ConvStep c;
  c.layout = layout;
  c.in = in;
  c.filters = filters;
  c.out = out;
  if (with_bias) c.bias = chan();
  v_.plan.push_back(Step{c, true});
}

void PlanBuilder::graph(spec::Layout in_layout, BufferRef in, BufferRef filters, BufferRef out, bool epilogue) {
  GraphStep g;
  g.in_layout = in_layout;
  g.in = in;
  g.filters = filters;
  g.out = out;
  g.epilogue = epilogue;
  if (p_.conv.bias || (epilogue && p_.num_params > 0)) g.chan = chan();
  v_.plan.push_back(Step{g, true});
}

void PlanBuilder::kernel(const std::string& name, const LaunchConfig& launch, std::vector<BufferRef> args,
                         std::vector<size_t> writes, bool timed) {
  KernelStep k;
  k.name = name;
  k.launch = launch;
  k.args.assign(args.begin(), args.end());
  k.writes = std::move(writes);
  v_.plan.push_back(Step{k, timed});
}

void PlanBuilder::transpose(const TransposeConfig& t, BufferRef in, BufferRef out, bool timed) {
  kernel(t.kernel_name, t.launch(), {in, out}, {1}, timed);
}

void PlanBuilder::set_output(BufferRef ref, spec::Layout layout) {
  v_.output = ref;
  v_.output_layout = layout;
}

}  // namespace fusetune::codegen
