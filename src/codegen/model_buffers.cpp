#include "codegen/model_buffers.hpp"

#include <string>
#include <utility>

#include <fmt/format.h>

namespace fusetune::codegen {

using spec::MainKind;
using spec::Shape;

Shape main_input_shape(const spec::Problem& p) {
  const spec::Conv& c = p.conv;
  const spec::Gemm& g = p.gemm;
  switch (p.main) {
    case MainKind::conv2d:
    case MainKind::conv_transpose2d: return {c.n, c.c, c.h, c.w};
    case MainKind::conv3d:
    case MainKind::conv_transpose3d: return {c.n, c.c, c.d, c.h, c.w};
    case MainKind::linear:
    case MainKind::matmul: {
      Shape s = g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k};
      if (g.batch > 1) s.insert(s.begin(), g.batch);
      return s;
    }
  }
  return {};
}

Shape main_weight_shape(const spec::Problem& p) {
  const spec::Conv& c = p.conv;
  const spec::Gemm& g = p.gemm;
  const bool three = p.main == MainKind::conv3d || p.main == MainKind::conv_transpose3d;
  Shape taps = three ? Shape{c.t, c.r, c.s} : Shape{c.r, c.s};
  switch (p.main) {
    case MainKind::conv2d:
    case MainKind::conv3d: taps.insert(taps.begin(), {c.k, c.c / c.groups}); return taps;
    case MainKind::conv_transpose2d:
    case MainKind::conv_transpose3d: taps.insert(taps.begin(), {c.c, c.k / c.groups}); return taps;
    case MainKind::linear: return {g.n, g.k};
    case MainKind::matmul: {
      Shape s = g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n};
      if (g.batch > 1) s.insert(s.begin(), g.batch);
      return s;
    }
  }
  return {};
}

bool main_has_bias(const spec::Problem& p) { return p.is_conv() ? p.conv.bias : p.gemm.bias; }

std::vector<std::pair<std::string, int64_t>> shape_dims(const spec::Problem& p, const Shape& shape, bool main_output) {
  std::vector<std::string> names;
  if (main_output) {
    if (p.is_conv()) names = shape.size() == 5 ? std::vector<std::string>{"N", "K", "O", "P", "Q"}
                                               : std::vector<std::string>{"N", "K", "P", "Q"};
    else names = shape.size() == 3 ? std::vector<std::string>{"B", "M", "N"} : std::vector<std::string>{"M", "N"};
  }
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < shape.size(); ++i)
    out.emplace_back(names.size() == shape.size() ? names[i] : fmt::format("d{}", i), shape[i]);
  return out;
}

BufferRef add_buffer(Variant& v, Buffer b) {
  v.buffers.push_back(std::move(b));
  return BufferRef(v.buffers.size() - 1);
}

MainBuffers add_main_inputs(Variant& v, const spec::Problem& p) {
  MainBuffers m;
  m.x = add_buffer(v, {"x", BufferKind::input, TensorLayout::row_major, shape_dims(p, main_input_shape(p)),
                       "the problem's input"});
  m.w = add_buffer(v, {"w", BufferKind::weights, TensorLayout::row_major, shape_dims(p, main_weight_shape(p)),
                       p.is_conv() ? "the conv weight as PyTorch holds it" : "the GEMM's second operand (the weight)"});
  if (main_has_bias(p))
    m.bias = add_buffer(v, {"bias", BufferKind::bias, TensorLayout::row_major, {{"d0", p.channels()}},
                            "the main operator's bias"});
  return m;
}

std::vector<BufferRef> add_param_buffers(Variant& v, const spec::Problem& p, const std::vector<spec::Shape>& shapes) {
  std::vector<BufferRef> out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Buffer b{fmt::format("param{}", i), BufferKind::param, TensorLayout::row_major, shape_dims(p, shapes[i]),
             fmt::format("parameter {}", i)};
    b.index = int(i);
    out.push_back(add_buffer(v, std::move(b)));
  }
  return out;
}

void add_kernel(Variant& v, const std::string& name, const LaunchConfig& launch, std::vector<KernelArg> args,
                std::vector<size_t> writes, bool timed) {
  KernelStep k;
  k.name = name;
  k.launch = launch;
  k.args = std::move(args);
  k.writes = std::move(writes);
  v.plan.push_back(Step{std::move(k), timed});
}

}  // namespace fusetune::codegen
