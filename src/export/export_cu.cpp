// export_cu: the winner as one self-contained .cu file:
//   1. a header comment: problem, GPU and software, times and speedups (summary.cpp)
//   2. the whole plan in words, cuDNN steps and buffer sizes included (plan_text.cpp)
//   3. the variant's generated source, verbatim: complete CUDA, no includes
//   4. the host section: one constexpr launch configuration per kernel step and
//      fusetune_run_epilogue(), which runs the plan on a stream.
//
// Why the host function takes a convolution callback: a plan may launch kernels on both sides
// of its cuDNN convolution (the channels-last designs transpose x before the conv and run the
// epilogue after it), so "the caller runs the conv, then calls us" cannot be right for every
// plan. The .cu stays free of cuDNN (it compiles with nvcc alone); the caller's callback runs
// the conv exactly as the plan comment specifies, at the right point of the stream.
#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codegen/compile_target.hpp"
#include "common/error.hpp"
#include "export/export.hpp"
#include "export/plan_buffers.hpp"
#include "export/plan_text.hpp"
#include "export/summary.hpp"
#include "export/winner.hpp"

namespace fusetune::exporter {
namespace {

constexpr int64_t kDefaultDynamicSmem = 48 * 1024;  // more needs cudaFuncSetAttribute first

std::string launch_name(size_t step) { return fmt::format("fusetune_step{}_launch", step); }

std::string launch_constants(const codegen::Variant& v) {
  std::string out =
      "// One kernel launch of the plan: grid, block, dynamic shared memory (bytes). Fixed when the\n"
      "// variant was generated: the kernels' extents are compile-time constants, so these are too.\n"
      "struct fusetune_launch {\n  dim3 grid;\n  dim3 block;\n  unsigned smem_bytes;\n};\n\n";
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const auto& st = v.plan[i];
    if (st.kind() != codegen::StepKind::kernel) continue;
    const auto& k = st.kernel();
    const auto& l = k.launch;
    out += fmt::format("// Plan step {}: {}{}\n", i + 1, k.name, st.timed ? "" : " (untimed, one-time transform)");
    out += fmt::format("constexpr fusetune_launch {} = {{dim3({}u, {}u, {}u), dim3({}u, {}u, {}u), {}u}};\n",
                       launch_name(i + 1), l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                       l.smem_bytes);
  }
  return out;
}

std::string kernel_call(size_t step, const codegen::Variant& v, const codegen::Step& st) {
  const auto& k = st.kernel();
  const std::string cfg = launch_name(step);
  std::string out = fmt::format("  // {}. {}\n", step, k.name);
  if (!st.timed) {
    out +=
        "  //    Untimed: a one-time transform of parameters. While they do not change, this launch\n"
        "  //    can be moved out of this function and run once, before the first call.\n";
  }
  if (int64_t(k.launch.smem_bytes) > kDefaultDynamicSmem) {
    out += fmt::format(
        "  err = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, int({}.smem_bytes));\n"
        "  if (err != cudaSuccess) return err;\n",
        k.name, cfg);
  }
  std::vector<std::string> args;
  for (size_t a = 0; a < k.args.size(); ++a) {
    const auto r = codegen::arg_buffer(k.args[a]);
    if (!r) refuse_model_plan(v.name);  // winner_variant refused it already
    args.push_back(v.buffer(*r).name);
  }
  out += fmt::format("  {}<<<{}.grid, {}.block,\n  {:{}}{}.smem_bytes, stream>>>({});\n", k.name, cfg, cfg, "",
                     k.name.size() + 3, cfg, fmt::join(args, ", "));
  out +=
      "  err = cudaGetLastError();  // a bad launch stops the plan before later steps read garbage\n"
      "  if (err != cudaSuccess) return err;\n";
  return out;
}

std::string conv_call(size_t step, const codegen::Variant& v, const codegen::Step& st, bool kernels_before) {
  const auto name = [&](codegen::BufferRef r) { return v.buffer(r).name; };
  std::string out, call;
  if (st.kind() == codegen::StepKind::cudnn_graph) {
    const auto& g = st.graph();
    out = fmt::format("  // {}. cuDNN fused graph: {} = graph({}, {}), as the plan above lists it, by the caller's "
                      "callback\n", step, name(g.out), name(g.in), name(g.filters));
    call = fmt::format("conv(conv_ctx, {}, {}, {}, {}, {}, stream)", step, name(g.in), name(g.filters),
                       g.chan ? name(*g.chan) : "nullptr", name(g.out));
  } else {
    const auto& c = st.conv();
    out = fmt::format("  // {}. cuDNN convolution: {} = conv({}, {}){}, by the caller's callback\n", step,
                      name(c.out), name(c.in), name(c.filters), c.bias ? " + bias" : "");
    call = fmt::format("conv(conv_ctx, {}, {}, {}, {}, {}, stream)", step, name(c.in), name(c.filters),
                       c.bias ? name(*c.bias) : "nullptr", name(c.out));
  }
  if (kernels_before) {  // conv was checked at the top: it cannot be skipped
    out += "  err = " + call + ";\n  if (err != cudaSuccess) return err;\n";
  } else {
    out += "  // conv == nullptr: the caller ran it already (no kernel of the plan comes before it).\n";
    out += "  if (conv != nullptr) {\n    err = " + call + ";\n    if (err != cudaSuccess) return err;\n  }\n";
  }
  return out;
}

// Whether some kernel step comes before a conv step: then the conv must run inside the host
// function (the caller cannot have run it before the call).
bool kernel_before_conv(const codegen::Variant& v) {
  bool kernel = false;
  for (const auto& st : v.plan) {
    switch (st.kind()) {
      case codegen::StepKind::kernel: kernel = true; break;
      case codegen::StepKind::cudnn_conv:
      case codegen::StepKind::cudnn_graph:
        if (kernel) return true;
        break;
      case codegen::StepKind::gemm:
      case codegen::StepKind::conv_nd: refuse_model_plan(v.name);
    }
  }
  return false;
}

std::string host_function(const codegen::Variant& v, const std::vector<BufferInfo>& buffers) {
  // One parameter per line, each with its buffer's layout and extents.
  std::vector<std::pair<std::string, std::string>> params;
  for (const auto& b : buffers) {
    params.emplace_back(fmt::format("{}{}", b.written ? "float* " : "const float* ", b.name),
                        fmt::format("{} {}{}", b.layout, b.dims, b.written ? "" : ", read only"));
  }
  params.emplace_back("fusetune_conv_fn conv", "runs the plan's cuDNN convolution steps");
  params.emplace_back("void* conv_ctx", "passed to conv as is");
  params.emplace_back("cudaStream_t stream", "");
  size_t width = 0;
  for (const auto& p : params) width = std::max(width, p.first.size() + 1);
  std::string signature;
  for (size_t i = 0; i < params.size(); ++i) {
    const bool last = i + 1 == params.size();
    const std::string decl = params[i].first + (last ? ") {" : ",");
    signature +=
        "    " + (params[i].second.empty() ? decl : fmt::format("{:<{}}  // {}", decl, width + 3, params[i].second));
    signature += "\n";
  }

  std::string out =
      "// The cuDNN convolution of plan step `step`, which the caller runs on `stream`:\n"
      "//   out = conv(in, filters) (+ bias[k] when bias is not null)\n"
      "// with the layouts, padding, stride, dilation and math mode the plan above gives for that\n"
      "// step; for a cuDNN fused-graph step, the graph the plan lists (bias = the per-channel\n"
      "// vectors the graph reads) with the engine configuration it names. conv_ctx is the caller's pointer, passed through. Return cudaSuccess, or an error\n"
      "// to stop the plan with.\n"
      "typedef cudaError_t (*fusetune_conv_fn)(void* conv_ctx, int step, const float* in, const float* filters,\n"
      "                                        const float* bias, float* out, cudaStream_t stream);\n\n"
      "// Runs the whole plan on `stream`, asynchronously (no synchronization), and returns the first\n"
      "// error, else cudaGetLastError(). The pointers are the plan's buffers (sizes and layouts in the\n"
      "// comment at the top), all device memory the caller owns, each 16-byte aligned (the kernels\n"
      "// read and write 16-byte words; cudaMalloc's pointers are). The kernels' shapes are fixed: only\n"
      "// the problem in the header may be run. extern \"C\" so it can be called through dlopen/ctypes.\n";
  out += "extern \"C\" cudaError_t fusetune_run_epilogue(\n" + signature;
  out += "  cudaError_t err = cudaSuccess;\n";
  if (kernel_before_conv(v)) {
    // Checked before anything is launched, so a bad call leaves no half-run plan behind.
    out +=
        "  // Kernels of the plan run before its convolution: it has to run in here, between them.\n"
        "  if (conv == nullptr) return cudaErrorInvalidValue;\n";
  }
  bool kernels_before = false;
  bool any_conv = false;
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const auto& st = v.plan[i];
    switch (st.kind()) {
      case codegen::StepKind::kernel:
        out += kernel_call(i + 1, v, st);
        kernels_before = true;
        break;
      case codegen::StepKind::cudnn_conv:
      case codegen::StepKind::cudnn_graph:
        out += conv_call(i + 1, v, st, kernels_before);
        any_conv = true;
        break;
      case codegen::StepKind::gemm:
      case codegen::StepKind::conv_nd: refuse_model_plan(v.name);
    }
  }
  if (!any_conv) out += "  (void)conv;\n  (void)conv_ctx;\n";
  out += "  return cudaGetLastError();\n}\n";
  return out;
}

// How to build the file. Most winners' kernels compile for any recent architecture; an
// arch-specific winner's (wgmma) only for the arch-specific target of the GPU it was tuned on,
// and nvcc needs the one flag that gets exactly there (the same smoke compiles it with).
std::string use_lines(const codegen::Variant& v, const db::WinnerRecord& w) {
  if (!v.arch_specific) {
    return "// Use: compile this file with nvcc (-arch=sm_XX for your GPU), allocate the buffers below, and\n"
           "// call fusetune_run_epilogue() (at the end) with a callback that runs the cuDNN convolution.\n";
  }
  const std::string arch = record_arch(v, w);  // "sm_90"
  const std::string target = codegen::compile_arch(v, arch);  // "sm_90a"
  return fmt::format(
      "// Use: compile this file with nvcc {} (exactly that: its\n"
      "// kernels use wgmma, which builds for the arch-specific target {} only, neither with\n"
      "// -arch={} nor with nvcc 13's -arch={}; the binary runs on GPUs of compute capability\n"
      "// {}.{} only), allocate the buffers below, and call fusetune_run_epilogue() (at the end) with a\n"
      "// callback that runs the cuDNN convolution.\n",
      codegen::nvcc_arch_flag(v, arch), target, arch, target, w.env.cc_major, w.env.cc_minor);
}

constexpr std::string_view kRule =
    "// =================================================================================================\n";

}  // namespace

std::string export_cu(const spec::Problem& problem, const db::WinnerRecord& winner) {
  check_winner_problem(problem, winner);
  const codegen::Variant v = winner_variant(problem, winner);
  const auto buffers = plan_buffers(v);

  std::string out;
  out += kRule;
  out += comment_block(summary_lines(problem, winner, v), "// ");
  out += "//\n";
  out += use_lines(v, winner);
  out += "//\n";
  out += comment_block(
      plan_lines(problem, winner, v, buffers, "the caller: fusetune_run_epilogue calls its conv callback here"), "// ");
  out += kRule;
  out += "\n";
  out += kRule;
  out += "// The generated kernels, verbatim as tuned (complete CUDA: no includes needed).\n";
  out += kRule;
  out += v.source.empty() ? "// (none: this winner runs cuDNN only)\n" : v.source;
  if (!out.ends_with('\n')) out += '\n';
  out += "\n";
  out += kRule;
  out += "// Host side: launch configurations and the function that runs the plan.\n";
  out += kRule;
  out += "#include <cuda_runtime.h>\n\n";
  out += launch_constants(v);
  out += "\n";
  out += host_function(v, buffers);
  return out;
}

}  // namespace fusetune::exporter
