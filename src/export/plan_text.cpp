#include "export/plan_text.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "export/winner.hpp"

namespace fusetune::exporter {
namespace {

const BufferInfo& buffer(const std::vector<BufferInfo>& buffers, const std::string& name) {
  return *std::find_if(buffers.begin(), buffers.end(), [&](const BufferInfo& b) { return b.name == name; });
}

std::string pair_text(int64_t h, int64_t w) { return h == w ? fmt::format("{}", h) : fmt::format("{}x{}", h, w); }

void kernel_lines(std::vector<std::string>& out, size_t index, const codegen::Step& st) {
  const auto& l = st.launch;
  out.push_back(fmt::format("  {}. kernel {}({})  grid ({})  block ({})  dynamic smem {} B", index, st.kernel_name,
                            fmt::join(st.args, ", "), fmt::join(l.grid, ", "), fmt::join(l.block, ", "), l.smem_bytes));
  if (!st.timed) {
    out.push_back("     untimed: a one-time parameter transform (" + st.in + " -> " + st.out + ");");
    out.push_back("     while " + st.in + " does not change, the caller may run it once and skip it after");
  }
}

void conv_lines(std::vector<std::string>& out, size_t index, const codegen::Step& st, const spec::Problem& problem,
                const db::WinnerRecord& w, const std::vector<BufferInfo>& buffers, const std::string& runner) {
  const spec::Conv& c = problem.conv;
  const bool nhwc = st.conv_layout == spec::Layout::nhwc;
  const BufferInfo& in = buffer(buffers, st.in);
  const BufferInfo& filters = buffer(buffers, conv_filters(st));
  const BufferInfo& y = buffer(buffers, st.out);
  out.push_back(fmt::format(
      "  {}. cuDNN convolution: {} = conv({}, {}){}", index, st.out, st.in, filters.name,
      st.with_bias ? " + conv bias (chan[0 .. K))" : (c.bias ? ", WITHOUT the conv bias (a kernel adds it)" : "")));
  out.push_back("     run by " + runner);
  out.push_back(fmt::format("     input  {} {} {}", in.name, in.layout, in.dims));
  out.push_back(fmt::format("     filters {} {} {} (cuDNN filter format {})", filters.name, filters.layout,
                            filters.dims, nhwc ? "CUDNN_TENSOR_NHWC" : "CUDNN_TENSOR_NCHW"));
  out.push_back(fmt::format("     output {} {} {}", y.name, y.layout, y.dims));
  out.push_back(
      fmt::format("     pad {}, stride {}, dilation {}, CUDNN_CROSS_CORRELATION (PyTorch's Conv2d), "
                  "fp32 data and compute type",
                  pair_text(c.pad_h, c.pad_w), pair_text(c.stride_h, c.stride_w), pair_text(c.dil_h, c.dil_w)));
  out.push_back(w.math == "fp32"
                    ? "     math CUDNN_FMA_MATH: strict fp32 (no TF32), as tuned with --math fp32"
                    : "     math CUDNN_TENSOR_OP_MATH with TF32 allowed (PyTorch's default for cuDNN convs)");
  out.push_back("     algorithm found fastest when tuned: " +
                (w.cudnn_algo.empty() ? std::string("(not recorded; cudnnFindConvolutionForwardAlgorithm picks one)")
                                      : one_line(w.cudnn_algo)));
}

}  // namespace

std::vector<std::string> plan_lines(const spec::Problem& problem, const db::WinnerRecord& winner,
                                    const codegen::Variant& v, const std::vector<BufferInfo>& buffers,
                                    const std::string& conv_runner) {
  std::vector<std::string> out;
  out.emplace_back("The plan, in order, on one CUDA stream:");
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const auto& st = v.plan[i];
    if (st.kind == codegen::StepKind::kernel) {
      kernel_lines(out, i + 1, st);
    } else {
      conv_lines(out, i + 1, st, problem, winner, buffers, conv_runner);
    }
  }
  out.emplace_back("");
  out.emplace_back("Buffers (fp32, device memory, dense in the layout given):");
  size_t width = 0;
  for (const auto& b : buffers) width = std::max(width, b.name.size());
  for (const auto& b : buffers) {
    out.push_back(fmt::format("  {:<{}}  {:<11} {}: {} floats{}", b.name, width, b.layout, b.dims, b.floats,
                              b.written ? "" : ", read only"));
    out.push_back(fmt::format("  {:<{}}  {}", "", width, b.what));
  }
  out.emplace_back("");
  const auto it =
      std::find_if(buffers.begin(), buffers.end(), [&](const BufferInfo& b) { return b.name == v.output_buffer; });
  out.push_back(fmt::format("Result: the problem's output is in {}, {}{}", v.output_buffer,
                            layout_name(v.output_layout), it == buffers.end() ? "" : " " + it->dims));
  return out;
}

}  // namespace fusetune::exporter
