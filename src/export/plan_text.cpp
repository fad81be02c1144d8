#include "export/plan_text.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/cudnn_engine.hpp"
#include "codegen/op_render.hpp"
#include "export/plan_buffers.hpp"
#include "export/winner.hpp"
#include "spec/main_parser.hpp"
#include "spec/ops.hpp"

namespace fusetune::exporter {
namespace {

std::string pair_text(int64_t h, int64_t w) { return h == w ? fmt::format("{}", h) : fmt::format("{}x{}", h, w); }

void kernel_lines(std::vector<std::string>& out, size_t index, const codegen::Variant& v, const codegen::Step& st) {
  const auto& k = st.kernel();
  const auto& l = k.launch;
  std::vector<std::string> args;
  for (const auto& a : k.args) {
    if (const auto r = codegen::arg_buffer(a)) args.push_back(v.buffer(*r).name);
    else if (const auto* value = std::get_if<codegen::ValueArg>(&a)) args.push_back(value->type + " (by value)");
    else args.push_back("null");
  }
  out.push_back(fmt::format("  {}. kernel {}({})  grid ({})  block ({})  dynamic smem {} B", index, k.name,
                            fmt::join(args, ", "), fmt::join(l.grid, ", "), fmt::join(l.block, ", "), l.smem_bytes));
  if (!st.timed) {
    std::vector<std::string> in, written;
    for (auto r : st.reads()) in.push_back(v.buffer(r).name);
    for (auto r : st.writes()) written.push_back(v.buffer(r).name);
    out.push_back(fmt::format("     untimed: a one-time parameter transform ({} -> {});", fmt::join(in, ", "),
                              fmt::join(written, ", ")));
    out.push_back("     while its inputs do not change, the caller may run it once and skip it after");
  }
}

void conv_lines(std::vector<std::string>& out, size_t index, const codegen::Variant& v, const codegen::Step& st,
                const spec::Problem& problem, const db::WinnerRecord& w, const std::string& runner) {
  const spec::Conv& c = problem.conv;
  const auto& cs = st.conv();
  const bool nhwc = cs.layout == spec::Layout::nhwc;
  const codegen::Buffer& in = v.buffer(cs.in);
  const codegen::Buffer& filters = v.buffer(cs.filters);
  const codegen::Buffer& y = v.buffer(cs.out);
  const auto layout = [](const codegen::Buffer& b) { return std::string(codegen::tensor_layout_name(b.layout)); };
  out.push_back(fmt::format(
      "  {}. cuDNN convolution: {} = conv({}, {}){}", index, y.name, in.name, filters.name,
      cs.bias ? " + conv bias (chan[0 .. K))" : (c.bias ? ", WITHOUT the conv bias (a kernel adds it)" : "")));
  out.push_back("     run by " + runner);
  out.push_back(fmt::format("     input  {} {} {}", in.name, layout(in), in.dims_text()));
  out.push_back(fmt::format("     filters {} {} {} (cuDNN filter format {})", filters.name, layout(filters),
                            filters.dims_text(), nhwc ? "CUDNN_TENSOR_NHWC" : "CUDNN_TENSOR_NCHW"));
  out.push_back(fmt::format("     output {} {} {}", y.name, layout(y), y.dims_text()));
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

// The graph of a cudnn-fused step, node by node, and the engine configuration it was tuned with.
void graph_lines(std::vector<std::string>& out, size_t index, const codegen::Variant& v, const codegen::Step& st,
                 const spec::Problem& problem, const std::string& runner) {
  const spec::Conv& c = problem.conv;
  const auto& g = st.graph();
  const codegen::Buffer& in = v.buffer(g.in);
  const codegen::Buffer& filters = v.buffer(g.filters);
  const codegen::Buffer& y = v.buffer(g.out);
  const auto layout = [](const codegen::Buffer& b) { return std::string(codegen::tensor_layout_name(b.layout)); };
  out.push_back(fmt::format("  {}. cuDNN fused graph (graph API, runtime fusion): {} = graph({}, {}{})", index, y.name,
                            in.name, filters.name, g.chan ? ", " + v.buffer(*g.chan).name : ""));
  out.push_back("     run by " + runner);
  out.push_back(fmt::format("     input  {} {} {}", in.name, layout(in), in.dims_text()));
  out.push_back(fmt::format("     filters {} {} {}", filters.name, layout(filters), filters.dims_text()));
  out.push_back(fmt::format("     output {} {} {}", y.name, layout(y), y.dims_text()));
  std::vector<std::string> nodes{fmt::format("conv_fprop (pad {}, stride {}, dilation {}, fp32 data and compute)",
                                             pair_text(c.pad_h, c.pad_w), pair_text(c.stride_h, c.stride_w),
                                             pair_text(c.dil_h, c.dil_w))};
  if (c.bias) nodes.emplace_back("add conv bias (chan[0 .. K) as a [1, K, 1, 1] tensor)");
  if (g.epilogue) {
    for (const auto& op : problem.pre) nodes.push_back(codegen::op_text(op));
    if (problem.reduce)
      nodes.push_back(fmt::format("reduction {} over channels{}", spec::reduce_name(*problem.reduce),
                                  *problem.reduce == spec::ReduceKind::mean ? " (as a sum: 1/K comes after)" : ""));
  }
  out.push_back(fmt::format("     nodes: {}", fmt::join(nodes, " -> ")));
  const auto key = codegen::engine_of(v);
  out.push_back("     engine configuration: " + (key ? codegen::engine_label(*key) : std::string("cuDNN's heuristic choice")) +
                " (engine index, then knob type_value; cudnn_frontend::Graph::create_execution_plan builds it)");
}

}  // namespace

std::vector<std::string> plan_lines(const spec::Problem& problem, const db::WinnerRecord& winner,
                                    const codegen::Variant& v, const std::vector<BufferInfo>& buffers,
                                    const std::string& conv_runner) {
  std::vector<std::string> out;
  out.emplace_back("The plan, in order, on one CUDA stream:");
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const auto& st = v.plan[i];
    switch (st.kind()) {
      case codegen::StepKind::kernel: kernel_lines(out, i + 1, v, st); break;
      case codegen::StepKind::cudnn_conv: conv_lines(out, i + 1, v, st, problem, winner, conv_runner); break;
      case codegen::StepKind::cudnn_graph: graph_lines(out, i + 1, v, st, problem, conv_runner); break;
      case codegen::StepKind::gemm: {
        const auto& g = st.gemm();
        const bool act = g.activation != GemmActivation::none;
        out.push_back(fmt::format("  {}. {}: {} = {}{}{} @ {}{}{}{}  (batch {}, m {}, k {}, n {}; {}{})", i + 1,
                                  g.linear ? "linear" : "matmul", v.buffer(g.out).name,
                                  act ? std::string(gemm_activation_name(g.activation)) + "(" : std::string(),
                                  v.buffer(g.a).name, g.gemm.trans_a ? "^T" : "", v.buffer(g.b).name,
                                  g.linear || g.gemm.trans_b ? "^T" : "",
                                  g.bias ? " + " + v.buffer(*g.bias).name : std::string(), act ? ")" : "",
                                  g.gemm.batch, g.gemm.m, g.gemm.k, g.gemm.n, conv_runner,
                                  g.algo != 0 ? fmt::format(", cuBLASLt heuristic's algorithm of rank {}", g.algo)
                                              : std::string()));
        break;
      }
      case codegen::StepKind::conv_nd: {
        const auto& c = st.conv_nd();
        out.push_back(fmt::format("  {}. {}: {} = {}({}, {}{})  ({})", i + 1, spec::detail::main_name(c.main),
                                  v.buffer(c.out).name, spec::detail::main_name(c.main), v.buffer(c.in).name,
                                  v.buffer(c.filters).name, c.bias ? ", " + v.buffer(*c.bias).name : std::string(),
                                  conv_runner));
        break;
      }
    }
  }
  out.emplace_back("");
  out.emplace_back("Buffers (fp32, device memory, dense in the layout given):");
  size_t width = 0;
  for (const auto& b : buffers) width = std::max(width, b.name.size());
  for (const auto& b : buffers) {
    out.push_back(fmt::format("  {:<{}}  {:<11} {}: {} floats{}", b.name, width, b.layout, b.dims, b.floats,
                              b.written ? "" : ", read only"));
    out.push_back(fmt::format("  {:<{}}  {}", "", width, one_line(b.what)));
  }
  out.emplace_back("");
  const codegen::Buffer& o = v.output_buffer();
  out.push_back(fmt::format("Result: the problem's output is in {}, {} {}", o.name, exporter::layout_name(v.output_layout),
                            o.dims_text()));
  return out;
}

}  // namespace fusetune::exporter
